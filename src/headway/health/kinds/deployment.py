"""apps/Deployment health, as Argo CD assesses it."""

from __future__ import annotations

from typing import Any

from headway.health.fields import find_condition, get, get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Suspended when paused; Progressing until the controller has observed the current
    generation and every desired replica is updated and available; Degraded once the
    Progressing condition reports ProgressDeadlineExceeded."""
    if get(obj, "spec", "paused") is True:
        return HealthResult(HealthStatus.SUSPENDED, "Deployment is paused")
    if get_int(obj, "metadata", "generation") > get_int(obj, "status", "observedGeneration"):
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for rollout to finish: observed deployment generation less than "
            "desired generation",
        )
    return _rollout_progress(obj) or HealthResult(HealthStatus.HEALTHY)


def _rollout_progress(obj: Any) -> HealthResult | None:
    progressing = find_condition(obj, "Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        name = get_str(obj, "metadata", "name")
        return HealthResult(
            HealthStatus.DEGRADED, f'Deployment "{name}" exceeded its progress deadline'
        )
    updated = get_int(obj, "status", "updatedReplicas")
    replicas = get_int(obj, "status", "replicas")
    available = get_int(obj, "status", "availableReplicas")
    if get(obj, "spec", "replicas") is not None:
        desired = get_int(obj, "spec", "replicas")
        if updated < desired:
            return HealthResult(
                HealthStatus.PROGRESSING,
                f"Waiting for rollout to finish: {updated} out of {desired} new replicas "
                "have been updated...",
            )
    if replicas > updated:
        return HealthResult(
            HealthStatus.PROGRESSING,
            f"Waiting for rollout to finish: {replicas - updated} old replicas are pending "
            "termination...",
        )
    if available < updated:
        return HealthResult(
            HealthStatus.PROGRESSING,
            f"Waiting for rollout to finish: {available} of {updated} updated replicas are "
            "available...",
        )
    return None
