"""apps/StatefulSet health, as Argo CD assesses it."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get, get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Progressing until the spec is observed and all replicas are ready; then, by update
    strategy: a partitioned RollingUpdate is Healthy once the pods above the partition are
    updated, OnDelete is Healthy, and a plain RollingUpdate waits for the revisions to meet."""
    observed = get_int(obj, "status", "observedGeneration")
    if observed == 0 or get_int(obj, "metadata", "generation") > observed:
        return HealthResult(
            HealthStatus.PROGRESSING, "Waiting for statefulset spec update to be observed..."
        )
    ready = get_int(obj, "status", "readyReplicas")
    has_replicas = get(obj, "spec", "replicas") is not None
    desired = get_int(obj, "spec", "replicas")
    if has_replicas and ready < desired:
        return HealthResult(
            HealthStatus.PROGRESSING, f"Waiting for {desired - ready} pods to be ready..."
        )
    strategy = get_str(obj, "spec", "updateStrategy", "type")
    rolling = get(obj, "spec", "updateStrategy", "rollingUpdate")
    updated = get_int(obj, "status", "updatedReplicas")
    if strategy == "RollingUpdate" and isinstance(rolling, dict):
        return _partitioned(obj, has_replicas=has_replicas, desired=desired, updated=updated)
    if strategy == "OnDelete":
        return HealthResult(HealthStatus.HEALTHY, f"statefulset has {ready} ready pods")
    update_rev = get_str(obj, "status", "updateRevision")
    current_rev = get_str(obj, "status", "currentRevision")
    if update_rev != current_rev:
        return HealthResult(
            HealthStatus.PROGRESSING,
            f"waiting for statefulset rolling update to complete {updated} pods at revision "
            f"{update_rev}...",
        )
    current = get_int(obj, "status", "currentReplicas")
    return HealthResult(
        HealthStatus.HEALTHY,
        f"statefulset rolling update complete {current} pods at revision {current_rev}...",
    )


def _partitioned(obj: Any, *, has_replicas: bool, desired: int, updated: int) -> HealthResult:
    partition_set = get(obj, "spec", "updateStrategy", "rollingUpdate", "partition") is not None
    if has_replicas and partition_set:
        target = desired - get_int(obj, "spec", "updateStrategy", "rollingUpdate", "partition")
        if updated < target:
            return HealthResult(
                HealthStatus.PROGRESSING,
                f"Waiting for partitioned roll out to finish: {updated} out of {target} new "
                "pods have been updated...",
            )
    return HealthResult(
        HealthStatus.HEALTHY,
        f"partitioned roll out complete: {updated} new pods have been updated...",
    )
