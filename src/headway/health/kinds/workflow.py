"""argoproj.io/Workflow health (Argo Workflows), from `status.phase`, as Argo CD's built-in."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

# A workflow that has not started (no phase yet), waits or runs is on its way.
_STATUS_OF_PHASE = {
    "": HealthStatus.PROGRESSING,
    "Pending": HealthStatus.PROGRESSING,
    "Running": HealthStatus.PROGRESSING,
    "Succeeded": HealthStatus.HEALTHY,
    "Failed": HealthStatus.DEGRADED,
    "Error": HealthStatus.DEGRADED,
}


def assess(obj: Any) -> HealthResult:
    """The phase decides, with `status.message` as the message; a phase this check does not
    know is Unknown (never Healthy)."""
    phase = get_str(obj, "status", "phase")
    status = _STATUS_OF_PHASE.get(phase, HealthStatus.UNKNOWN)
    return HealthResult(status, get_str(obj, "status", "message"))
