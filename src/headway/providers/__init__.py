"""Metric providers for analysis, one module each behind the `MetricProvider` protocol."""
