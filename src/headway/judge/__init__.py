"""Statistics for comparing a canary against its baseline. No I/O."""
