"""Health assessment: one module per kind behind a registry keyed by (group, kind). No I/O."""
