"""Should an automated sync start now? Purely computational; `now` is an argument.

Argo CD's rules: only automated apps that are OutOfSync, not being deleted and not already
operating; nothing to do when pruning is off and only prunes remain; self-heal re-syncs an
already-synced revision after a back-off; an automated prune never wipes out every resource
unless `allowEmpty`.

Headway's deliberate difference: Argo CD never retries a revision whose sync failed (the
app sits OutOfSync until a new commit or a human). Headway retries it with the retry
back-off, up to the retry limit, and only then reports SyncError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from headway.kubetime import format_time
from headway.model.application import Automated, Retry
from headway.sync.retry import (
    AUTOMATED_DEFAULT_RETRY,
    SELF_HEAL_BACKOFF,
    next_retry_at,
    retries_remain,
    self_heal_delay,
)

__all__ = [
    "AutoSyncAction",
    "AutoSyncDecision",
    "LastOperation",
    "ResourceState",
    "decide_auto_sync",
]


class AutoSyncAction(StrEnum):
    SYNC = "sync"
    SKIP = "skip"
    WAIT = "wait"
    SYNC_ERROR = "SyncError"


@dataclass(frozen=True)
class ResourceState:
    synced: bool
    requires_pruning: bool = False


@dataclass(frozen=True)
class LastOperation:
    """The most recent sync operation, as persisted in the app's status."""

    revision: str
    succeeded: bool
    finished_at: datetime
    message: str = ""
    self_heal_attempts: int = 0
    # Automated re-attempts already made for this same failed revision (Headway only).
    failed_reattempts: int = 0


@dataclass(frozen=True)
class AutoSyncDecision:
    action: AutoSyncAction
    reason: str
    at: datetime | None = None
    prune: bool = False
    self_heal_attempts: int = 0
    failed_reattempts: int = 0


def decide_auto_sync(
    now: datetime,
    *,
    automated: Automated | None,
    out_of_sync: bool,
    revision: str,
    resources: Sequence[ResourceState],
    last: LastOperation | None = None,
    retry: Retry | None = None,
    operation_running: bool = False,
    deleting: bool = False,
) -> AutoSyncDecision:
    skip = _precondition(automated, out_of_sync, operation_running, deleting, resources)
    if skip is not None:
        return AutoSyncDecision(AutoSyncAction.SKIP, skip)
    assert automated is not None  # checked by _precondition
    if last is not None and last.revision == revision:
        decision = _same_revision(now, automated, last, retry or AUTOMATED_DEFAULT_RETRY)
        if decision.action is not AutoSyncAction.SYNC:
            return decision
    else:
        decision = AutoSyncDecision(
            AutoSyncAction.SYNC, f"Initiated automated sync to '{revision}'", at=now
        )
    wipe = _wipe_out_guard(automated, revision, resources)
    if wipe is not None:
        return wipe
    return AutoSyncDecision(
        decision.action,
        decision.reason,
        at=now,
        prune=automated.prune,
        self_heal_attempts=decision.self_heal_attempts,
        failed_reattempts=decision.failed_reattempts,
    )


def _precondition(
    automated: Automated | None,
    out_of_sync: bool,
    operation_running: bool,
    deleting: bool,
    resources: Sequence[ResourceState],
) -> str | None:
    if automated is None or not automated.enabled:
        return "automated sync is not enabled"
    if operation_running:
        return "an operation is already running"
    if deleting:
        return "the application is being deleted"
    if not out_of_sync:
        return "the application is not OutOfSync"
    if not automated.prune and all(r.synced or r.requires_pruning for r in resources):
        return "only pruning is needed and automated prune is off"
    return None


def _same_revision(
    now: datetime, automated: Automated, last: LastOperation, retry: Retry
) -> AutoSyncDecision:
    if not last.succeeded:
        return _failed_revision(now, last, retry)
    if not automated.self_heal:
        return AutoSyncDecision(
            AutoSyncAction.SKIP, f"most recent sync already to {last.revision} (selfHeal off)"
        )
    attempts = last.self_heal_attempts
    due = last.finished_at + self_heal_delay(attempts, SELF_HEAL_BACKOFF)
    if due > now:
        return AutoSyncDecision(AutoSyncAction.WAIT, "self-heal back-off", at=due)
    return AutoSyncDecision(
        AutoSyncAction.SYNC,
        f"self-heal: re-syncing {last.revision} (attempt {attempts + 1})",
        self_heal_attempts=attempts + 1,
    )


def _failed_revision(now: datetime, last: LastOperation, retry: Retry) -> AutoSyncDecision:
    """Headway retries a failed revision with bounded back-off instead of never."""
    done = last.failed_reattempts
    if not retries_remain(done, retry.limit):
        return AutoSyncDecision(
            AutoSyncAction.SYNC_ERROR,
            f"Failed last sync attempt to {last.revision}: {last.message} "
            f"(retried {done} times; retry budget spent)",
        )
    due = next_retry_at(last.finished_at, done, retry.backoff)
    if due > now:
        return AutoSyncDecision(
            AutoSyncAction.WAIT,
            f"sync to {last.revision} failed; retry {done + 1} of {_limit(retry)} at "
            f"{format_time(due)}",
            at=due,
        )
    return AutoSyncDecision(
        AutoSyncAction.SYNC,
        f"retrying failed sync to {last.revision} (retry {done + 1} of {_limit(retry)})",
        failed_reattempts=done + 1,
    )


def _limit(retry: Retry) -> str:
    return str(retry.limit) if retry.limit >= 0 else "unlimited"


def _wipe_out_guard(
    automated: Automated, revision: str, resources: Sequence[ResourceState]
) -> AutoSyncDecision | None:
    if not automated.prune or automated.allow_empty or not resources:
        return None
    if all(r.requires_pruning for r in resources):
        return AutoSyncDecision(
            AutoSyncAction.SYNC_ERROR,
            f"Skipping sync attempt to {revision}: auto-sync will wipe out all resources",
        )
    return None
