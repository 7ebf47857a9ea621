"""Analysis assessment: measurement outcomes and run phases from metric limits. No I/O."""
