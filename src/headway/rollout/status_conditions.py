"""The conditions a reconcile writes, with Argo Rollouts' reasons and messages.

* `InvalidSpec` True while the spec cannot be run (the phase is then Degraded).
* `Progressing`: False/RolloutAborted while aborted ("Rollout aborted update to revision N:
  <why>"), Unknown/RolloutPaused while paused, True/NewReplicaSetAvailable once complete,
  True/ReplicaSetUpdated whenever progress is made (this moves `lastUpdateTime`), and
  False/ProgressDeadlineExceeded when no progress was made for `progressDeadlineSeconds`
  outside an indefinite step (a pause without duration, an analysis step); with
  `progressDeadlineAbort` that also aborts.
* `Paused`, `Available`, `Healthy` and `Completed`, as their names say.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from headway.kubetime import parse_time
from headway.rollout import conditions as cond
from headway.rollout.context import Draft

__all__ = ["update_conditions"]

# Leaving these states counts as progress (the deadline starts again).
_RESTARTS_PROGRESS = ("RolloutPaused", "NewReplicaSetAvailable", cond.ABORTED)
_PROGRESS_FIELDS = (
    "currentPodHash",
    "currentStepIndex",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "stableRS",
)


def _new_rs_name(d: Draft) -> str:
    return d.ctx.sets.new.name if d.ctx.sets.new else d.ctx.name


def _complete(d: Draft) -> bool:
    status, spec = d.status, d.ctx.rollout.spec
    promoted = bool(status.get("stableRS")) and status["stableRS"] == d.ctx.current_hash
    enough = int(status.get("availableReplicas") or 0) >= spec.replicas
    updated = int(status.get("updatedReplicas") or 0) == spec.replicas
    if spec.strategy.blue_green is not None:
        active = (status.get("blueGreen") or {}).get("activeSelector")
        return promoted and updated and enough and active == d.ctx.current_hash
    canary = spec.strategy.canary
    if canary is not None and canary.traffic_routing is None:
        updated = updated and int(status.get("replicas") or 0) == spec.replicas
    return promoted and updated and enough


def _indefinite_step(d: Draft) -> bool:
    canary = d.ctx.rollout.spec.strategy.canary
    index = int(d.status.get("currentStepIndex") or 0)
    if canary is None or index >= len(canary.steps):
        return False
    step = canary.steps[index]
    return step.analysis is not None or (step.pause is not None and step.pause.duration is None)


def _progress_made(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return any(old.get(f) != new.get(f) for f in _PROGRESS_FIELDS)


def _aborted_message(d: Draft, old: dict[str, Any] | None) -> str:
    base = f"Rollout aborted update to revision {d.ctx.revision}"
    if d.abort_message:
        return f"{base}: {d.abort_message}"
    if old is not None and old.get("reason") == cond.ABORTED:
        return str(old.get("message") or base)
    return base


def _progressing(d: Draft) -> None:
    old = cond.get_condition(d.ctx.status, "Progressing")
    if d.aborted:
        message = _aborted_message(d, old)
        _set(d, "Progressing", False, cond.ABORTED, message)
        if old is None or (old.get("reason"), old.get("message")) != (cond.ABORTED, message):
            # As Argo Rollouts does when the condition changes: `describe` shows why it aborted.
            d.event(cond.ABORTED, message, warning=True)
        return
    name = _new_rs_name(d)
    if _complete(d):
        message = f'ReplicaSet "{name}" has successfully progressed.'
        _set(d, "Progressing", True, "NewReplicaSetAvailable", message)
    elif d.pause_conditions or d.ctx.rollout.spec.paused:
        _set(d, "Progressing", True, "RolloutPaused", "Rollout is paused")
    elif (
        old is None
        or old.get("reason") in _RESTARTS_PROGRESS
        or _progress_made(d.ctx.status, d.status)
    ):
        message = f'ReplicaSet "{name}" is progressing.'
        cond.set_condition(
            d.status,
            "Progressing",
            true=True,
            reason="ReplicaSetUpdated",
            message=message,
            now=d.ctx.now,
            touch=True,
        )
        if not _indefinite_step(d):
            d.wake_in(d.ctx.rollout.spec.progress_deadline_seconds)
    else:
        _deadline(d, old)


def _deadline(d: Draft, progressing: dict[str, Any]) -> None:
    if _indefinite_step(d) or progressing.get("reason") == cond.TIMED_OUT:
        return
    last = parse_time(progressing.get("lastUpdateTime")) or d.ctx.now
    seconds = d.ctx.rollout.spec.progress_deadline_seconds
    left = (last + timedelta(seconds=seconds) - d.ctx.now).total_seconds()
    if left > 0:
        d.wake_in(left)
        return
    name = _new_rs_name(d)
    cond.set_condition(
        d.status,
        "Progressing",
        true=False,
        reason=cond.TIMED_OUT,
        message=f'ReplicaSet "{name}" has timed out progressing.',
        now=d.ctx.now,
    )
    if d.ctx.rollout.spec.progress_deadline_abort:
        d.abort(f'ReplicaSet "{name}" has timed out progressing.')
        d.wake_in(0)


def _set(d: Draft, kind: str, true: bool, reason: str, message: str) -> None:
    cond.set_condition(d.status, kind, true=true, reason=reason, message=message, now=d.ctx.now)


def _summary_conditions(d: Draft) -> None:
    """Paused, Available, Healthy and Completed."""
    paused = bool(d.pause_conditions) or d.ctx.rollout.spec.paused
    if paused or cond.get_condition(d.status, "Paused") is not None:
        reason = "RolloutPaused" if paused else "RolloutResumed"
        _set(d, "Paused", paused, reason, "Rollout is paused" if paused else "Rollout is resumed")
    available = int(d.status.get("availableReplicas") or 0) >= d.ctx.rollout.spec.replicas
    how = "has" if available else "does not have"
    _set(d, "Available", available, "AvailableReason", f"Rollout {how} minimum availability")
    healthy = _complete(d) and not paused and not d.aborted
    message = "Rollout is healthy" if healthy else "Rollout is not healthy"
    _set(d, "Healthy", healthy, "RolloutHealthy", message)
    _set(d, "Completed", _complete(d), "RolloutCompleted", "RolloutCompleted")


def update_conditions(d: Draft) -> None:
    if d.invalid is not None:
        _set(d, cond.INVALID_SPEC, True, cond.INVALID_SPEC, d.invalid)
        return
    cond.remove_condition(d.status, cond.INVALID_SPEC)
    _progressing(d)
    _summary_conditions(d)
