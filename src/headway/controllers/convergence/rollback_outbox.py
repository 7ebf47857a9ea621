"""The outbox of rollbacks that Git could not take: pushed as soon as Git is back.

When `headway app rollback` cannot write Git, the rollback is still synced (to the old
commits, which the controller's Git cache holds) and the commit still to write is recorded
on the Application itself, in the same update that requests the sync: the annotation
`headway.dev/rollback-pending`. So the cluster is never rolled back without the entry, and
the entry survives a controller restart with the store. While it is there the Application
is diverged from Git and automated sync holds (`controllers.app`).

`RollbackOutbox` drains it: it writes the rollback (`write_rollback`) and only then removes
the entry. A restart between the two finds the tip already restoring the target, so the
second write commits nothing: pushed once. The same holds when someone fixed Git
meanwhile: nothing is committed and the entry is cleared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers import exit_points
from headway.controllers.convergence.facts import ARGO_API
from headway.controllers.convergence.rollback import (
    OpenBranch,
    RollbackPlan,
    RollbackRefused,
    write_rollback,
)
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj
from headway.model.rollback_pending import ROLLBACK_PENDING_ANNOTATION
from headway.redaction import redact_url_credentials
from headway.source.errors import SourceError
from headway.source.spec import raw_sources

__all__ = [
    "PendingRollback",
    "RollbackOutbox",
    "pending_annotation",
    "read_pending",
]

FIELD_MANAGER = "headway-rollback-outbox"
# Seconds between attempts while Git stays unreachable: doubling, capped.
_FIRST_RETRY = 5.0
_MAX_RETRY = 60.0


@dataclass(frozen=True)
class PendingRollback:
    """A rollback synced on the cluster whose commit is still to be written."""

    who: str
    reason: str
    history_id: str
    from_revisions: tuple[str, ...]
    to_revisions: tuple[str, ...]
    error: str  # why Git could not be written when it was asked

    def plan(self, app: Obj) -> RollbackPlan:
        meta = app["metadata"]
        return RollbackPlan(
            app=f"{meta.get('namespace')}/{meta['name']}",
            who=self.who,
            reason=self.reason,
            history_id=self.history_id,
            sources=tuple(raw_sources(app)),
            from_revisions=self.from_revisions,
            to_revisions=self.to_revisions,
        )


def pending_annotation(plan: RollbackPlan, *, error: str) -> dict[str, str]:
    """The annotation that records `plan` as still to be written to Git."""
    entry = PendingRollback(
        who=plan.who,
        reason=plan.reason,
        history_id=plan.history_id,
        from_revisions=plan.from_revisions,
        to_revisions=plan.to_revisions,
        error=redact_url_credentials(error),
    )
    return {ROLLBACK_PENDING_ANNOTATION: json.dumps(asdict(entry), sort_keys=True)}


def read_pending(app: Obj) -> PendingRollback | None:
    """The pending rollback of `app`; None when there is none. A value that is not one
    raises ValueError naming the annotation."""
    text = ((app.get("metadata") or {}).get("annotations") or {}).get(ROLLBACK_PENDING_ANNOTATION)
    if not text:
        return None
    try:
        data: Any = json.loads(str(text))
        return PendingRollback(
            who=str(data["who"]),
            reason=str(data["reason"]),
            history_id=str(data["history_id"]),
            from_revisions=tuple(str(r) for r in data["from_revisions"]),
            to_revisions=tuple(str(r) for r in data["to_revisions"]),
            error=str(data.get("error") or ""),
        )
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(
            f"annotation {ROLLBACK_PENDING_ANNOTATION}: not a pending rollback ({err})"
        ) from None


class RollbackOutbox:
    """Pushes pending rollbacks (one key per Application) once Git can be written."""

    name = "rollback-outbox"
    watches: Sequence[tuple[str, str]] = ((ARGO_API, "Application"),)

    def __init__(self, cluster: Cluster, clock: Clock, *, open_branch: OpenBranch) -> None:
        self._cluster = cluster
        self._clock = clock
        self._open_branch = open_branch
        self._failures: dict[ObjectKey, int] = {}

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        return [ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name")))]

    def step(self, key: ObjectKey) -> float | None:
        try:
            app = self._cluster.get(ARGO_API, "Application", key.name, key.namespace)
        except NotFound:
            self._failures.pop(key, None)
            return None
        try:
            pending = read_pending(app)
        except ValueError as err:
            self._event(app, "RollbackPushFailed", str(err))
            return None
        if pending is None:
            self._failures.pop(key, None)
            return None
        exit_points.reached("rollback-before-push")
        try:
            written = write_rollback(pending.plan(app), open_branch=self._open_branch)
        except SourceError as err:
            return self._retry_later(key, app, f"Git could not be written: {err}")
        except RollbackRefused as err:
            self._event(app, "RollbackPushFailed", f"rollback cannot be written to Git: {err}")
            return None  # a person must act; the condition stays and says why
        exit_points.reached("rollback-pushed")
        return self._clear(key, app, f"rollback pushed to Git: {written.summary}")

    def _retry_later(self, key: ObjectKey, app: Obj, message: str) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = min(_MAX_RETRY, _FIRST_RETRY * float(2**failures))
        self._event(app, "RollbackPushRetrying", f"{message}; next attempt in {delay:.0f}s")
        return delay

    def _clear(self, key: ObjectKey, app: Obj, message: str) -> float | None:
        meta = app["metadata"]
        annotations = dict(meta.get("annotations") or {})
        annotations.pop(ROLLBACK_PENDING_ANNOTATION, None)
        body = {k: v for k, v in app.items() if k != "status"}
        body["metadata"] = {**meta, "annotations": annotations}
        try:
            self._cluster.update(body, field_manager=FIELD_MANAGER)
        except Conflict:
            return 0.0  # changed meanwhile: the next write finds Git already restored
        except ClusterError:
            return _FIRST_RETRY
        self._failures.pop(key, None)
        self._event(app, "RollbackPushed", message)
        return None

    def _event(self, app: Obj, reason: str, message: str) -> None:
        try:
            record_event(
                self._cluster,
                self._clock,
                involved=app,
                reason=reason,
                message=redact_url_credentials(message),
                component="headway-rollback-outbox",
                event_type="Normal" if reason == "RollbackPushed" else "Warning",
            )
        except ClusterError:
            return
