"""The Application controller's operation half: take a requested sync, advance a running
one by one unit, or ask the automated policy whether to start one.

The controller (`controller.py`) reads, checks and compares; once it holds a comparison it
hands over here. What this half needs from the controller (its store, health, live reads,
and its ways to word a condition and record an Event) comes in `OperationEdges`, as the
deletion half's comes in `deletion_steps.DeletionEdges`. Every function edits the status
mapping it is given and returns the seconds until the controller should step again; the
controller writes the status once, at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from headway import kubetime
from headway.cluster.errors import Conflict
from headway.cluster.protocol import Cluster
from headway.controllers.app import operations as ops
from headway.controllers.app.live import LiveReader, existing_namespaces
from headway.controllers.app.project import ProjectGuard
from headway.controllers.app.sync_executor import ExecutorInput, step_operation
from headway.controllers.app.sync_tasks_io import FIELD_MANAGER, StatusReplacing
from headway.health import HealthRegistry
from headway.model.application import Application
from headway.model.obj import Obj
from headway.source.spec import raw_sources
from headway.sync.autosync import (
    AutoSyncAction,
    AutoSyncDecision,
    ResourceState,
    decide_auto_sync,
)
from headway.sync.comparison import Comparison
from headway.sync.operation_state import OperationPhase, OperationState
from headway.sync.options import SyncOptions, parse_option_items
from headway.sync.windows import AppTarget, window_decision

__all__ = [
    "OperationEdges",
    "Setup",
    "auto_sync",
    "cluster_scoped_crds",
    "step_unless_window_closed",
    "take_operation",
]

# How long a sync held by a sync window waits before looking again, at most.
WINDOW_RECHECK_SECONDS = 60.0


@dataclass
class Setup:
    """What a step works out before comparing: the parsed app, its cluster, its project
    guard, and any condition that stops it there."""

    raw: Obj
    app: Application | None = None
    cluster: Cluster | None = None
    guard: ProjectGuard | None = None
    conditions: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class OperationEdges:
    """What the operation half needs from the controller running it."""

    store: Cluster
    health: HealthRegistry
    reader: Callable[[Cluster], LiveReader]
    cluster_scoped: Callable[[Cluster, Sequence[Mapping[str, Any]]], frozenset[tuple[str, str]]]
    instance: Callable[[Application], str]
    condition: Callable[[str, str], dict[str, Any]]
    event: Callable[[Obj, str, str], None]
    diverged: Callable[[Obj], list[Obj]]
    now: Callable[[], datetime]
    poll_seconds: float


def take_operation(edges: OperationEdges, setup: Setup, status: Obj) -> tuple[Obj, Obj | None]:
    """Move a requested `operation` into `status.operationState` (unless one runs).

    Taking is one write: the request is removed and the Running state written together,
    preconditioned on the resourceVersion the decision was read at. Done as two writes,
    a second `app sync` landing between them saw neither a request nor a running
    operation, was accepted, and its hooks ran again after the first.
    """
    raw = setup.raw
    requested = raw.get("operation")
    current = status.get("operationState")
    if not isinstance(requested, Mapping) or ops.is_running(current):
        return raw, None
    store = edges.store
    if not isinstance(store, StatusReplacing):
        raise TypeError("the control-plane store must write an object with its status")
    assert setup.app is not None
    now = edges.now()
    state = ops.new_operation_state(requested, now=now, revisions=())
    refusal = _window_refusal(edges, setup, manual=True)
    if refusal is not None:
        message = f"Cannot sync: {refusal}"
        state = ops.ended(state, phase=OperationPhase.FAILED, message=message, now=now)
    body = {k: v for k, v in raw.items() if k not in ("operation", "status")}
    taken = {**body, "status": {**(raw.get("status") or {}), "operationState": state}}
    try:
        raw = store.update(taken, field_manager=FIELD_MANAGER, with_status=True)
    except Conflict:  # changed since read (a withdrawn request, say): look again
        return raw, None
    setup.raw = raw
    return raw, state


def step_unless_window_closed(
    edges: OperationEdges, setup: Setup, *, status: Obj, comparison: Comparison, rules: Any
) -> float:
    """A deny window opening (or an allow window closing) holds a running operation
    between units, unless the windows allow overrun; it resumes when syncing is allowed."""
    state = OperationState.from_dict(status["operationState"])
    refusal = None
    if state.phase is not OperationPhase.TERMINATING:
        started = kubetime.parse_time(state.started_at)
        refusal = _window_refusal(edges, setup, manual=not state.automated, started_at=started)
    if refusal is None:
        return _step(edges, setup, status=status, comparison=comparison, rules=rules)
    message = f"Sync operation blocked by sync window: {refusal}"
    status["operationState"] = replace(state, message=message).to_dict()
    return min(edges.poll_seconds, WINDOW_RECHECK_SECONDS)


def auto_sync(
    edges: OperationEdges,
    setup: Setup,
    *,
    status: Obj,
    comparison: Comparison,
    revisions: tuple[str, ...],
) -> float:
    """Ask the automated policy (`sync.autosync`) whether to start a sync, and start it."""
    app = setup.app
    assert app is not None
    diverged = edges.diverged(setup.raw)
    if diverged:  # a rollback Git has not taken yet: re-syncing the tip would undo it
        status["conditions"] += diverged
        return edges.poll_seconds
    policy = app.spec.sync_policy
    decision = decide_auto_sync(
        edges.now(),
        automated=policy.automated if policy else None,
        out_of_sync=comparison.sync_status == "OutOfSync",
        revision=revisions[0] if revisions else "",
        resources=[
            ResourceState(r.status == "Synced", r.requires_pruning)
            for r in comparison.resources
            if not r.hook
        ],
        last=ops.last_operation(status.get("operationState")),
        retry=policy.retry if policy else None,
        deleting=(setup.raw.get("metadata") or {}).get("deletionTimestamp") is not None,
    )
    if decision.action is AutoSyncAction.SYNC_ERROR:
        status["conditions"].append(edges.condition("SyncError", decision.reason))
        return edges.poll_seconds
    if decision.action is AutoSyncAction.WAIT and decision.at is not None:
        return max(0.0, (decision.at - edges.now()).total_seconds())
    if decision.action is not AutoSyncAction.SYNC:
        return edges.poll_seconds
    return _start_automated(edges, setup, status=status, decision=decision, revisions=revisions)


def cluster_scoped_crds(objects: Sequence[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    """Kinds a CustomResourceDefinition in the app itself declares cluster-scoped."""
    found = set()
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj.get("kind") == "CustomResourceDefinition" and spec.get("scope") == "Cluster":
            found.add((str(spec.get("group") or ""), str((spec.get("names") or {}).get("kind"))))
    return frozenset(found)


def _window_refusal(
    edges: OperationEdges, setup: Setup, *, manual: bool, started_at: datetime | None = None
) -> str | None:
    """Why the project's sync windows forbid syncing now; `started_at` for an operation
    already running (which `syncOverrun` lets finish)."""
    assert setup.app is not None and setup.guard is not None
    destination = setup.app.spec.destination
    target = AppTarget(
        name=setup.app.name,
        namespace=destination.namespace or "",
        server=setup.guard.server,
        cluster_name=setup.guard.cluster_name,
    )
    windows = setup.guard.project.spec.sync_windows
    decision = window_decision(
        edges.now(), windows, app=target, manual=manual, operation_started_at=started_at
    )
    return None if decision.allowed else decision.reason


def _step(
    edges: OperationEdges, setup: Setup, *, status: Obj, comparison: Comparison, rules: Any
) -> float:
    """One unit of the running operation (`sync_executor`), then its retry or history."""
    raw, app, cluster, guard = setup.raw, setup.app, setup.cluster, setup.guard
    assert app is not None and cluster is not None and guard is not None
    state = status["operationState"]
    now = edges.now()
    wait = ops.retry_wait(state, now)
    if wait > 0:
        return wait
    scoped = edges.cluster_scoped(cluster, comparison.desired)
    outcome = step_operation(
        ExecutorInput(
            cluster=cluster,
            app=edges.instance(app),
            namespace=app.spec.destination.namespace or "",
            state=state,
            desired=comparison.desired,
            live=comparison.live,
            plan_options=_sync_options(app, state),
            now=now,
            assess=edges.health.assess,
            modified=comparison.modified,
            prune_confirmed=ops.prune_confirmed(raw, state),
            rules=rules,
            refuse=replace(guard, cluster_scoped=scoped).resource,
            existing_namespaces=existing_namespaces(cluster),
            cluster_scoped=scoped,
            namespace_metadata=(
                app.spec.sync_policy.managed_namespace_metadata if app.spec.sync_policy else None
            ),
        )
    )
    status["operationState"] = outcome.state
    retry = ops.retry_after_failure(outcome.state, edges.now()) if outcome.finished else None
    if retry is not None:
        status["operationState"], delay = retry
        return delay
    if outcome.finished:
        status["history"] = ops.append_history(
            status.get("history") or [],
            outcome.state,
            sources=raw_sources(raw),
            limit=app.spec.revision_history_limit,
        )
        return 0.0  # compare again at once, against what the sync left
    return outcome.requeue_after if outcome.requeue_after is not None else 0.0


def _start_automated(
    edges: OperationEdges,
    setup: Setup,
    *,
    status: Obj,
    decision: AutoSyncDecision,
    revisions: tuple[str, ...],
) -> float:
    refusal = _window_refusal(edges, setup, manual=False)
    if refusal is not None:
        edges.event(setup.raw, "SyncWindowBlocked", f"automated sync skipped: {refusal}")
        return min(edges.poll_seconds, WINDOW_RECHECK_SECONDS)
    operation = ops.sync_operation(
        initiated_by="automated",
        automated=True,
        revisions=revisions,
        prune=decision.prune,
        self_heal_attempts=decision.self_heal_attempts,
    )
    status["operationState"] = ops.new_operation_state(
        operation, now=edges.now(), revisions=revisions, retry_count=decision.failed_reattempts
    )
    edges.event(setup.raw, "OperationStarted", decision.reason)
    return 0.0


def _sync_options(app: Application, state: Mapping[str, Any]) -> SyncOptions:
    policy = app.spec.sync_policy
    items = list(policy.sync_options if policy else ())
    items += OperationState.from_dict(state).request.sync_options
    return parse_option_items(items).options
