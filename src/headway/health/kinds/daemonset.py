"""apps/DaemonSet health, as Argo CD assesses it."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Progressing until the generation is observed and every scheduled pod is updated and
    available; OnDelete daemon sets are Healthy as soon as the generation is observed."""
    if get_int(obj, "metadata", "generation") > get_int(obj, "status", "observedGeneration"):
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for rollout to finish: observed daemon set generation less than desired "
            "generation",
        )
    updated = get_int(obj, "status", "updatedNumberScheduled")
    desired = get_int(obj, "status", "desiredNumberScheduled")
    available = get_int(obj, "status", "numberAvailable")
    name = get_str(obj, "metadata", "name")
    if get_str(obj, "spec", "updateStrategy", "type") == "OnDelete":
        return HealthResult(
            HealthStatus.HEALTHY,
            f"daemon set {updated} out of {desired} new pods have been updated",
        )
    if updated < desired:
        return HealthResult(
            HealthStatus.PROGRESSING,
            f'Waiting for daemon set "{name}" rollout to finish: {updated} out of {desired} '
            "new pods have been updated...",
        )
    if available < desired:
        return HealthResult(
            HealthStatus.PROGRESSING,
            f'Waiting for daemon set "{name}" rollout to finish: {available} of {desired} '
            "updated pods are available...",
        )
    return HealthResult(HealthStatus.HEALTHY)
