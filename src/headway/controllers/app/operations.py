"""Operations and history in Argo CD's shapes: the `operation` a user or the automated
policy asks for, the `status.operationState` that runs it, and `status.history`.

Argo CD records history only for successful full syncs; Headway records every finished
operation - failed and selective ones too - with its `phase` and the selected `resources`,
so `headway app history` answers "what was attempted" as well as "what was deployed".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from headway.kubetime import format_time, parse_time
from headway.model.application import Backoff
from headway.model.durations import parse_duration
from headway.sync.autosync import LastOperation
from headway.sync.operation import finished
from headway.sync.operation_state import (
    OperationPhase,
    OperationState,
    OperationStateError,
    SyncResult,
    pinned_request,
)
from headway.sync.retry import DEFAULT_BACKOFF, retries_remain, retry_delay

__all__ = [
    "CONFIRM_PRUNE_ANNOTATION",
    "append_history",
    "ended",
    "last_operation",
    "new_operation_state",
    "pin_revisions",
    "prune_confirmed",
    "retry_after_failure",
    "retry_wait",
    "sync_operation",
    "unreadable",
    "waiting_for_confirmation",
]

# Argo CD's annotation: a timestamp after the operation started approves its pending prunes.
CONFIRM_PRUNE_ANNOTATION = "argocd.argoproj.io/deletion-approved"

TERMINAL_PHASES = ("Succeeded", "Failed", "Error")


def sync_operation(
    *,
    initiated_by: str,
    automated: bool = False,
    revisions: Sequence[str] = (),
    prune: bool = False,
    dry_run: bool = False,
    resources: Sequence[Mapping[str, str]] = (),
    self_heal_attempts: int = 0,
    retry_limit: int = 0,
) -> dict[str, Any]:
    """An `operation` object as Argo CD writes it on the Application."""
    sync: dict[str, Any] = {"prune": prune}
    if revisions:
        sync["revision"] = revisions[0]
        if len(revisions) > 1:
            sync["revisions"] = list(revisions)
    if dry_run:
        sync["dryRun"] = True
    if resources:
        sync["resources"] = [dict(r) for r in resources]
    if self_heal_attempts:
        sync["selfHealAttemptsCount"] = self_heal_attempts
    who = {"automated": True} if automated else {"username": initiated_by}
    operation: dict[str, Any] = {"sync": sync, "initiatedBy": who}
    if retry_limit:
        operation["retry"] = {"limit": retry_limit}
    return operation


def new_operation_state(
    operation: Mapping[str, Any], *, now: datetime, revisions: Sequence[str], retry_count: int = 0
) -> dict[str, Any]:
    """A Running operation state, its revision pinned to what was resolved at its start."""
    sync = dict(operation.get("sync") or {})
    if not sync.get("revision") and revisions:
        sync = pinned_request(operation, revisions)
    pinned = [str(sync.get("revision") or "")]
    if sync.get("revisions"):
        pinned = [str(r) for r in sync["revisions"]]
    state = OperationState(
        operation={**operation, "sync": sync},
        phase=OperationPhase.RUNNING,
        started_at=format_time(now),
        # Headway's own field: marks the hooks this operation creates (startedAt has only
        # second resolution, so two operations may share it).
        operation_id=uuid.uuid4().hex,
        retry_count=retry_count,
        sync_result=SyncResult(revision=pinned[0], revisions=tuple(pinned)),
    )
    return state.to_dict()


def ended(
    state: Mapping[str, Any], *, phase: OperationPhase, message: str, now: datetime
) -> dict[str, Any]:
    """The operation in `state` over: its phase and message, when, and no wave cursor. A
    state with a field that cannot be read ends as its request and start time alone."""
    try:
        typed = OperationState.from_dict(state)
    except OperationStateError:
        operation = state.get("operation")
        typed = OperationState(
            operation=operation if isinstance(operation, Mapping) else {},
            phase=phase,
            started_at=str(state.get("startedAt") or ""),
        )
    return finished(typed, phase=phase, message=message, at=format_time(now)).to_dict()


def unreadable(state: Mapping[str, Any]) -> str:
    """Why the stored operation state cannot be read (naming the field), or ""."""
    try:
        OperationState.from_dict(state)
    except OperationStateError as err:
        return str(err)
    return ""


def pin_revisions(state: Mapping[str, Any], revisions: Sequence[str]) -> dict[str, Any]:
    """An operation started without a revision syncs to what its first step resolved."""
    if not revisions:
        return dict(state)
    return OperationState.from_dict(state).pinned_to(revisions).to_dict()


def pinned_revisions(state: Mapping[str, Any]) -> list[str]:
    return OperationState.from_dict(state).pinned_revisions


def is_running(state: Mapping[str, Any] | None) -> bool:
    return bool(state) and (state or {}).get("phase") not in TERMINAL_PHASES


def last_operation(state: Mapping[str, Any] | None) -> LastOperation | None:
    """The finished operation the automated policy judges against."""
    if not state or state.get("phase") not in TERMINAL_PHASES:
        return None
    typed = OperationState.from_dict(state)
    finished = parse_time(typed.finished_at)
    if finished is None:
        return None
    return LastOperation(
        revision=typed.sync_result.revision if typed.sync_result else "",
        succeeded=typed.phase is OperationPhase.SUCCEEDED,
        finished_at=finished,
        message=typed.message,
        self_heal_attempts=typed.request.self_heal_attempts,
        failed_reattempts=typed.retry_count or 0,
    )


def prune_confirmed(app: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    annotations = (app.get("metadata") or {}).get("annotations") or {}
    approved = parse_time(annotations.get(CONFIRM_PRUNE_ANNOTATION))
    started = parse_time(state.get("startedAt"))
    return approved is not None and started is not None and approved >= started


def waiting_for_confirmation(app: Mapping[str, Any]) -> str:
    """What of `app` waits for `confirm-prune`: the running operation's message when it
    waits for pruning confirmation, or the deletion condition naming resources that wait
    for deletion confirmation; "" when nothing does."""
    status = app.get("status") or {}
    state = status.get("operationState") or {}
    if is_running(state) and "confirmation" in str(state.get("message") or "").lower():
        return str(state["message"])
    if (app.get("metadata") or {}).get("deletionTimestamp"):
        for condition in status.get("conditions") or []:
            if "waiting for deletion confirmation" in str(condition.get("message") or ""):
                return str(condition["message"])
    return ""


def append_history(
    history: Sequence[Mapping[str, Any]],
    state: Mapping[str, Any],
    *,
    sources: Sequence[Mapping[str, Any]],
    limit: int,
) -> list[dict[str, Any]]:
    """The history with the finished operation in `state` appended, oldest first, trimmed
    to `revisionHistoryLimit` entries."""
    typed = OperationState.from_dict(state)
    revisions = typed.pinned_revisions
    entry: dict[str, Any] = {
        "id": max((int(h.get("id") or 0) for h in history), default=-1) + 1,
        "revision": revisions[0],
        "deployStartedAt": typed.started_at,
        "deployedAt": typed.finished_at,
        "initiatedBy": typed.operation.get("initiatedBy") or {},
        "phase": str(typed.phase),
        "message": typed.message,
        "retryCount": typed.retry_count or 0,
    }
    if len(sources) > 1:
        entry["revisions"], entry["sources"] = revisions, [dict(s) for s in sources]
    elif sources:
        entry["source"] = dict(sources[0])
    sync = typed.operation.get("sync") or {}
    if sync.get("resources"):
        entry["resources"] = sync["resources"]
    if typed.request.dry_run:
        entry["dryRun"] = True
    out = [dict(h) for h in history] + [entry]
    return out[-limit:] if limit > 0 else out


def _backoff(raw: Mapping[str, Any]) -> Backoff:
    try:
        return Backoff(
            duration=parse_duration(raw.get("duration", "5s")),
            factor=int(raw.get("factor", 2)),
            max_duration=parse_duration(raw.get("maxDuration", "3m")),
        )
    except (ValueError, TypeError):
        return DEFAULT_BACKOFF


def retry_after_failure(
    state: Mapping[str, Any], now: datetime
) -> tuple[dict[str, Any], float] | None:
    """Argo CD's in-operation retry (`operation.retry`, e.g. `sync --retry-limit 3`): a
    failed operation runs again from the start after the back-off, `retryCount` + 1; with
    `refresh` it re-resolves the revision. None when no retry is left."""
    typed = OperationState.from_dict(state)
    retry = typed.operation.get("retry") or {}
    limit = int(retry.get("limit") or 0)
    count = typed.retry_count or 0
    if typed.phase is not OperationPhase.FAILED or limit == 0 or not retries_remain(count, limit):
        return None
    delay = retry_delay(count, _backoff(retry.get("backoff") or {})).total_seconds()
    at = format_time(now + timedelta(seconds=delay))
    again = replace(
        typed,
        phase=OperationPhase.RUNNING,
        message=f"Retrying attempt #{count + 1} at {at}: {typed.message}",
        operation_id=uuid.uuid4().hex,
        retry_count=count + 1,
        retry_at=at,
        sync_result=replace(typed.sync_result or SyncResult(), resources=()),
        dry_run_done=False,
        sync_fail_hooks_run=False,
        wave=None,
        finished_at=None,
    )
    if retry.get("refresh"):
        sync = {k: v for k, v in (typed.operation.get("sync") or {}).items() if k != "revision"}
        operation = {**typed.operation, "sync": sync}
        again = replace(again, operation=operation, sync_result=SyncResult(revisions=()))
    return again.to_dict(), delay


def retry_wait(state: Mapping[str, Any], now: datetime) -> float:
    """Seconds until a retrying operation may run again (0 when it may now)."""
    at = parse_time(OperationState.from_dict(state).retry_at)
    return 0.0 if at is None else max(0.0, (at - now).total_seconds())
