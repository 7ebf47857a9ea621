"""apiregistration.k8s.io/APIService health, from its Available condition."""

from __future__ import annotations

from typing import Any

from headway.health.fields import find_condition, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    available = find_condition(obj, "Available")
    if available is None:
        return HealthResult(HealthStatus.PROGRESSING, "Waiting to be processed")
    message = f"{get_str(available, 'reason')}: {get_str(available, 'message')}"
    if available.get("status") == "True":
        return HealthResult(HealthStatus.HEALTHY, message)
    return HealthResult(HealthStatus.PROGRESSING, message)
