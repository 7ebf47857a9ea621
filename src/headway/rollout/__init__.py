"""Rollout arithmetic and decisions: replica counts, weights, step progression. No I/O."""
