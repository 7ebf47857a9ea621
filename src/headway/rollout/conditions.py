"""Rollout conditions and phase, with Argo Rollouts' types, reasons and messages.

Conditions: `Progressing` (ReplicaSetUpdated, NewReplicaSetAvailable, RolloutAborted,
ProgressDeadlineExceeded, RolloutPaused, RolloutResumed), `Available` (AvailableReason),
`Healthy` (RolloutHealthy), `Paused` (RolloutPaused), `Completed` (RolloutCompleted) and
`InvalidSpec` (InvalidSpec). The phase is derived from them and the counters in the same
order as Argo's `CalculateRolloutPhase`, so Argo CD's Rollout health check reads it the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from headway.kubetime import format_time

__all__ = [
    "ABORTED",
    "INVALID_SPEC",
    "TIMED_OUT",
    "get_condition",
    "remove_condition",
    "rollout_phase",
    "set_condition",
]

ABORTED = "RolloutAborted"
TIMED_OUT = "ProgressDeadlineExceeded"
INVALID_SPEC = "InvalidSpec"
# The API server refused a write the plan needed (admission 422/400, RBAC 403, 429 that
# persisted): the Rollout says so until a step goes through. Headway's own condition type.
API_REFUSED = "ReconcileError"


def get_condition(status: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def set_condition(
    status: dict[str, Any],
    kind: str,
    *,
    true: bool,
    reason: str,
    message: str,
    now: datetime,
    touch: bool = False,
) -> None:
    """Set a condition; an unchanged one keeps its times unless `touch` (progress made)."""
    old = get_condition(status, kind)
    value = "True" if true else "False"
    same = old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
        value,
        reason,
        message,
    )
    if same and not touch:
        return
    stamp = format_time(now)
    transition = old.get("lastTransitionTime") if old and old.get("status") == value else stamp
    entry = {
        "type": kind,
        "status": value,
        "reason": reason,
        "message": message,
        "lastUpdateTime": stamp,
        "lastTransitionTime": transition or stamp,
    }
    others = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    status["conditions"] = [*others, entry]


def remove_condition(status: dict[str, Any], kind: str) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    status["conditions"] = kept


def _degraded(status: Mapping[str, Any]) -> tuple[str, str] | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == INVALID_SPEC and cond.get("status") == "True":
            return "Degraded", f"{INVALID_SPEC}: {cond.get('message', '')}"
        if cond.get("reason") in (ABORTED, TIMED_OUT):
            return "Degraded", f"{cond['reason']}: {cond.get('message', '')}"
    return None


def _strategy_progress(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str | None:
    strategy = spec.get("strategy") or {}
    promoted = bool(status.get("stableRS")) and status.get("stableRS") == status.get(
        "currentPodHash"
    )
    if strategy.get("blueGreen") is not None:
        active = (status.get("blueGreen") or {}).get("activeSelector")
        if not active or active != status.get("currentPodHash"):
            return "active service cutover pending"
        if not promoted:
            return "waiting for analysis to complete"
        return None
    canary = strategy.get("canary") or {}
    pending = int(status.get("replicas") or 0) > int(status.get("updatedReplicas") or 0)
    if canary.get("trafficRouting") is None and pending:
        return "old replicas are pending termination"
    if not promoted:
        return "waiting for all steps to complete"
    return None


# Pauses that wait for a person's judgement on missing evidence; shown before a step's pause,
# which would otherwise hide them (Argo shows whichever pause was added first).
_DECISIVE_PAUSES = ("InconclusiveAnalysis", "InconclusiveAnalysisRun")


def _pause_reason(pauses: Sequence[Mapping[str, Any]]) -> str:
    """The reason a paused rollout shows: an inconclusive analysis before any other pause."""
    reasons = [str(p.get("reason", "")) for p in pauses]
    return next((r for r in reasons if r in _DECISIVE_PAUSES), reasons[0])


def rollout_phase(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[str, str]:
    """(phase, message): Degraded, Paused, Progressing or Healthy."""
    degraded = _degraded(status)
    if degraded is not None:
        return degraded
    if spec.get("paused"):
        return "Paused", "manually paused"
    pauses = [p for p in status.get("pauseConditions") or [] if isinstance(p, dict)]
    if pauses:
        return "Paused", _pause_reason(pauses)
    restart_at = spec.get("restartAt")
    if restart_at and status.get("restartedAt") != restart_at:
        return "Progressing", "rollout is restarting"
    replicas = int(spec.get("replicas", 1))
    updated = int(status.get("updatedReplicas") or 0)
    if updated < replicas:
        return "Progressing", "more replicas need to be updated"
    if int(status.get("availableReplicas") or 0) < updated:
        return "Progressing", "updated replicas are still becoming available"
    waiting = _strategy_progress(spec, status)
    if waiting is not None:
        return "Progressing", waiting
    return "Healthy", ""
