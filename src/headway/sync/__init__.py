"""Sync planning: ordering by phase, wave, kind and name; hooks; prune decisions;
the wave gate; and the automated-sync, retry, window and project policies. No I/O."""
