"""Built-in health checks, one module per kind, each exposing `assess(obj) -> HealthResult`."""
