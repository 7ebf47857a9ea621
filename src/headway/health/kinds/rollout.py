"""argoproj.io/Rollout health: Argo CD's built-in Lua check, rewritten in Python."""

from __future__ import annotations

from typing import Any

from headway.health.fields import annotations_of, conditions, get, get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

_ABORTED_OR_STUCK = frozenset({"RolloutAborted", "ProgressDeadlineExceeded"})


def assess(obj: Any) -> HealthResult:
    """Progressing until the controller observed the spec; then the phase Argo Rollouts
    records (Paused reads as Suspended); for controllers too old to record one, conditions,
    pause, replica counts and the stable/active hashes decide."""
    if not _generation_observed(obj) or not _workload_generation_observed(obj):
        return HealthResult(
            HealthStatus.PROGRESSING, "Waiting for rollout spec update to be observed"
        )
    phase = get(obj, "status", "phase")
    if phase is not None:
        return _from_phase(str(phase), get_str(obj, "status", "message"))
    return _legacy(obj)


def _from_phase(phase: str, message: str) -> HealthResult:
    if phase == "Paused":
        return HealthResult(HealthStatus.SUSPENDED, message)
    try:
        return HealthResult(HealthStatus(phase), message)
    except ValueError:
        return HealthResult(HealthStatus.UNKNOWN, f"unknown Rollout phase {phase!r}: {message}")


def _generation_observed(obj: Any) -> bool:
    if not isinstance(get(obj, "status"), dict):
        return False
    raw = get(obj, "status", "observedGeneration")
    generation = get_int(obj, "metadata", "generation")
    try:
        observed = int(str(raw))
    except ValueError:
        return True  # pre-v0.10 controllers wrote a hash here, not a number
    return observed > generation or observed == generation


def _workload_generation_observed(obj: Any) -> bool:
    if get(obj, "spec", "workloadRef") is None or get(obj, "metadata", "annotations") is None:
        return True
    wanted = annotations_of(obj).get("rollout.argoproj.io/workload-generation")
    seen = get(obj, "status", "workloadObservedGeneration")
    return _number(wanted) == _number(seen)


def _number(value: Any) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def _legacy(obj: Any) -> HealthResult:
    for condition in conditions(obj):
        is_invalid = condition.get("type") == "InvalidSpec"
        is_stopped = (
            condition.get("type") == "Progressing" and condition.get("reason") in _ABORTED_OR_STUCK
        )
        if is_invalid or is_stopped:
            return HealthResult(HealthStatus.DEGRADED, get_str(condition, "message"))
    pause_conditions = get(obj, "status", "pauseConditions")
    if (isinstance(pause_conditions, list) and pause_conditions) or get(
        obj, "spec", "paused"
    ) is True:
        return HealthResult(HealthStatus.SUSPENDED, "Rollout is paused")
    if get(obj, "status", "currentPodHash") is None:
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for rollout to finish: status has not been reconciled.",
        )
    return _replicas(obj) or _strategy(obj) or HealthResult(HealthStatus.HEALTHY)


def _replicas(obj: Any) -> HealthResult | None:
    desired = get_int(obj, "spec", "replicas", default=1)
    updated = get_int(obj, "status", "updatedReplicas")
    if updated < desired:
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for roll out to finish: More replicas need to be updated",
        )
    if get_int(obj, "status", "availableReplicas") < updated:
        return HealthResult(
            HealthStatus.PROGRESSING,
            "Waiting for roll out to finish: updated replicas are still becoming available",
        )
    return None


def _strategy(obj: Any) -> HealthResult | None:
    current = get_str(obj, "status", "currentPodHash")
    stable = get_str(obj, "status", "stableRS") or get_str(obj, "status", "canary", "stableRS")
    if get(obj, "spec", "strategy", "blueGreen") is not None:
        if get_str(obj, "status", "blueGreen", "activeSelector") != current:
            return HealthResult(HealthStatus.PROGRESSING, "active service cutover pending")
        if stable and stable != current:
            return HealthResult(HealthStatus.PROGRESSING, "waiting for analysis to complete")
    elif get(obj, "spec", "strategy", "canary") is not None:
        if get_int(obj, "status", "replicas") > get_int(obj, "status", "updatedReplicas"):
            return HealthResult(
                HealthStatus.PROGRESSING,
                "Waiting for roll out to finish: old replicas are pending termination",
            )
        if stable != current:
            return HealthResult(HealthStatus.PROGRESSING, "Waiting for rollout to finish steps")
    return None
