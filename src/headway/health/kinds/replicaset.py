"""apps/ReplicaSet health, as Argo CD assesses it."""

from __future__ import annotations

from typing import Any

from headway.health.fields import find_condition, get, get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Degraded on a true ReplicaFailure condition; Progressing until the generation is
    observed and every desired replica is available."""
    if get_int(obj, "metadata", "generation") > get_int(obj, "status", "observedGeneration"):
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for rollout to finish: observed replica set generation less than desired "
            "generation",
        )
    failure = find_condition(obj, "ReplicaFailure")
    if failure is not None and failure.get("status") == "True":
        return HealthResult(HealthStatus.DEGRADED, get_str(failure, "message"))
    available = get_int(obj, "status", "availableReplicas")
    if get(obj, "spec", "replicas") is not None:
        desired = get_int(obj, "spec", "replicas")
        if available < desired:
            return HealthResult(
                HealthStatus.PROGRESSING,
                f"Waiting for rollout to finish: {available} out of {desired} new replicas are "
                "available...",
            )
    return HealthResult(HealthStatus.HEALTHY)
