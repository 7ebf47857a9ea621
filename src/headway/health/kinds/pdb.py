"""policy/PodDisruptionBudget health (Argo CD ships this as a built-in Lua check)."""

from __future__ import annotations

from typing import Any

from headway.health.fields import conditions, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Progressing until the controller reports conditions. A false condition is Degraded,
    except InsufficientPods (a budget waiting for its pods is a normal state); otherwise the
    last condition's reason is reported as Healthy."""
    result = HealthResult(HealthStatus.PROGRESSING, "Waiting for status")
    for condition in conditions(obj):
        reason = get_str(condition, "reason")
        message = f"PodDisruptionBudget has {reason}"
        if condition.get("status") == "False" and reason != "InsufficientPods":
            return HealthResult(HealthStatus.DEGRADED, message)
        result = HealthResult(HealthStatus.HEALTHY, message)
    return result
