"""Operations and history in Argo CD's shapes: the `operation` a user or the automated
policy asks for, the `status.operationState` that runs it, and `status.history`.

Argo CD records history only for successful full syncs; Headway records every finished
operation - failed and selective ones too - with its `phase` and the selected `resources`,
so `headway app history` answers "what was attempted" as well as "what was deployed".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from headway.model.application import Backoff
from headway.model.durations import parse_duration
from headway.sync.autosync import LastOperation
from headway.sync.retry import DEFAULT_BACKOFF, retries_remain, retry_delay

__all__ = [
    "CONFIRM_PRUNE_ANNOTATION",
    "append_history",
    "last_operation",
    "new_operation_state",
    "pin_revisions",
    "prune_confirmed",
    "retry_after_failure",
    "retry_wait",
    "sync_operation",
    "waiting_for_confirmation",
]

# Argo CD's annotation: a timestamp after the operation started approves its pending prunes.
CONFIRM_PRUNE_ANNOTATION = "argocd.argoproj.io/deletion-approved"

TERMINAL_PHASES = ("Succeeded", "Failed", "Error")


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


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
        sync["revision"] = revisions[0]
        if len(revisions) > 1:
            sync["revisions"] = list(revisions)
    pinned = [str(sync.get("revision") or "")]
    if sync.get("revisions"):
        pinned = [str(r) for r in sync["revisions"]]
    return {
        "operation": {**operation, "sync": sync},
        "phase": "Running",
        "message": "",
        "startedAt": stamp(now),
        # Headway's own field: marks the hooks this operation creates (startedAt has only
        # second resolution, so two operations may share it).
        "operationId": uuid.uuid4().hex,
        "retryCount": retry_count,
        "syncResult": {"revision": pinned[0], "revisions": pinned, "resources": []},
    }


def pin_revisions(state: Mapping[str, Any], revisions: Sequence[str]) -> dict[str, Any]:
    """An operation started without a revision syncs to what its first step resolved."""
    if not revisions:
        return dict(state)
    operation = dict(state.get("operation") or {})
    sync = dict(operation.get("sync") or {})
    sync["revision"] = revisions[0]
    if len(revisions) > 1:
        sync["revisions"] = list(revisions)
    result = {**(state.get("syncResult") or {}), "revision": revisions[0]}
    result["revisions"] = list(revisions)
    return {**state, "operation": {**operation, "sync": sync}, "syncResult": result}


def pinned_revisions(state: Mapping[str, Any]) -> list[str]:
    result = state.get("syncResult") or {}
    return [str(r) for r in result.get("revisions") or [result.get("revision") or ""]]


def is_running(state: Mapping[str, Any] | None) -> bool:
    return bool(state) and (state or {}).get("phase") not in TERMINAL_PHASES


def last_operation(state: Mapping[str, Any] | None) -> LastOperation | None:
    """The finished operation the automated policy judges against."""
    if not state or state.get("phase") not in TERMINAL_PHASES:
        return None
    finished = parse_stamp(state.get("finishedAt"))
    if finished is None:
        return None
    sync = (state.get("operation") or {}).get("sync") or {}
    return LastOperation(
        revision=str((state.get("syncResult") or {}).get("revision") or ""),
        succeeded=state.get("phase") == "Succeeded",
        finished_at=finished,
        message=str(state.get("message") or ""),
        self_heal_attempts=int(sync.get("selfHealAttemptsCount") or 0),
        failed_reattempts=int(state.get("retryCount") or 0),
    )


def prune_confirmed(app: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    annotations = (app.get("metadata") or {}).get("annotations") or {}
    approved = parse_stamp(annotations.get(CONFIRM_PRUNE_ANNOTATION))
    started = parse_stamp(state.get("startedAt"))
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
    sync = (state.get("operation") or {}).get("sync") or {}
    revisions = pinned_revisions(state)
    entry: dict[str, Any] = {
        "id": max((int(h.get("id") or 0) for h in history), default=-1) + 1,
        "revision": revisions[0],
        "deployStartedAt": state.get("startedAt"),
        "deployedAt": state.get("finishedAt"),
        "initiatedBy": (state.get("operation") or {}).get("initiatedBy") or {},
        "phase": state.get("phase"),
        "message": state.get("message"),
    }
    if len(sources) > 1:
        entry["revisions"], entry["sources"] = revisions, [dict(s) for s in sources]
    elif sources:
        entry["source"] = dict(sources[0])
    if sync.get("resources"):
        entry["resources"] = sync["resources"]
    if sync.get("dryRun"):
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
    retry = (state.get("operation") or {}).get("retry") or {}
    limit = int(retry.get("limit") or 0)
    count = int(state.get("retryCount") or 0)
    if state.get("phase") != "Failed" or limit == 0 or not retries_remain(count, limit):
        return None
    delay = retry_delay(count, _backoff(retry.get("backoff") or {})).total_seconds()
    at = stamp(now + timedelta(seconds=delay))
    dropped = ("wave", "dryRunDone", "syncFailHooksRun", "finishedAt")
    again = {k: v for k, v in state.items() if k not in dropped}
    again.update(phase="Running", retryCount=count + 1, retryAt=at)
    again["message"] = f"Retrying attempt #{count + 1} at {at}: {state.get('message')}"
    again["operationId"] = uuid.uuid4().hex
    again["syncResult"] = {**(state.get("syncResult") or {}), "resources": []}
    if retry.get("refresh"):
        operation = dict(state.get("operation") or {})
        sync = {k: v for k, v in (operation.get("sync") or {}).items() if k != "revision"}
        again["operation"] = {**operation, "sync": sync}
        again["syncResult"] = {"revision": "", "revisions": [], "resources": []}
    return again, delay


def retry_wait(state: Mapping[str, Any], now: datetime) -> float:
    """Seconds until a retrying operation may run again (0 when it may now)."""
    at = parse_stamp(state.get("retryAt"))
    return 0.0 if at is None else max(0.0, (at - now).total_seconds())
