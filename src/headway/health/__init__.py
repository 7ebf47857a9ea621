"""Health assessment: one module per kind behind a registry keyed by (group, kind). No I/O.

`assess(obj)` gives the built-in verdict; `HealthRegistry.with_scripts()` plugs Lua overrides
(see `overrides`) into the same dispatcher.
"""

from headway.health.registry import HealthRegistry, assess, default_registry, group_kind_of
from headway.health.status import HealthResult, HealthStatus, worst

__all__ = [
    "HealthRegistry",
    "HealthResult",
    "HealthStatus",
    "assess",
    "default_registry",
    "group_kind_of",
    "worst",
]
