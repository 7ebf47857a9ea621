"""Sync planning: ordering by phase, wave, kind and name; hooks; prune decisions. No I/O."""
