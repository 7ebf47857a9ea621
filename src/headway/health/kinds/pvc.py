"""core/PersistentVolumeClaim health, by claim phase."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

_BY_PHASE = {
    "Bound": HealthStatus.HEALTHY,
    "Pending": HealthStatus.PROGRESSING,
    "Lost": HealthStatus.DEGRADED,
}


def assess(obj: Any) -> HealthResult:
    phase = get_str(obj, "status", "phase")
    return HealthResult(_BY_PHASE.get(phase, HealthStatus.UNKNOWN))
