"""keda.sh/ScaledObject health (Argo CD ships this as a built-in Lua check)."""

from __future__ import annotations

from typing import Any

from headway.health.fields import conditions, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Degraded when Ready is false or Fallback is true; Healthy when Ready (Suspended when
    also Paused); otherwise Progressing. The message is the last relevant condition's."""
    ready = degraded = paused = False
    message = ""
    for condition in conditions(obj):
        kind, status = condition.get("type"), condition.get("status")
        relevant = (kind, status) in {
            ("Ready", "False"),
            ("Ready", "True"),
            ("Paused", "True"),
            ("Fallback", "True"),
        }
        if not relevant:
            continue
        message = get_str(condition, "message")
        degraded = degraded or (kind, status) in {("Ready", "False"), ("Fallback", "True")}
        ready = ready or (kind, status) == ("Ready", "True")
        paused = paused or kind == "Paused"
    if degraded:
        return HealthResult(HealthStatus.DEGRADED, message)
    if ready:
        return HealthResult(HealthStatus.SUSPENDED if paused else HealthStatus.HEALTHY, message)
    return HealthResult(HealthStatus.PROGRESSING, "Creating HorizontalPodAutoscaler Object")
