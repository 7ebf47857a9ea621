"""The plan of one sync operation: `plan_operation(state, inputs) -> SyncPlan`. Purely
computational.

The operation's request narrows the planner's inputs: a selective sync (`resources`) plans
only the selected objects and runs no hooks; `prune` and `revision` come from the request,
`startedAt` names `generateName` hooks. CreateNamespace with `managedNamespaceMetadata` gives
the created namespace its labels and annotations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from headway.kubetime import parse_time
from headway.model.obj import Obj
from headway.sync.hooks import SyncPhase
from headway.sync.operation_state import OperationState
from headway.sync.options import SyncOptions
from headway.sync.plan import SyncPlan
from headway.sync.planner import plan_sync
from headway.sync.resources import ResourceKey, key_of

__all__ = ["PlanInputs", "plan_operation"]



@dataclass(frozen=True)
class PlanInputs:
    """What the comparison and the app give the planner besides the operation's state."""

    desired: Sequence[Obj]
    live: Mapping[ResourceKey, Obj]
    options: SyncOptions
    namespace: str  # the destination namespace
    modified: Mapping[ResourceKey, bool] | None = None
    prune_confirmed: bool = False
    existing_namespaces: frozenset[str] = field(default_factory=frozenset)
    namespace_metadata: Mapping[str, Any] | None = None  # syncPolicy.managedNamespaceMetadata
    # (group, kind) of cluster-scoped kinds beyond the built-in table (discovery, CRDs)
    cluster_scoped: frozenset[tuple[str, str]] = frozenset()


def _is_selected(obj: Obj, selected: frozenset[tuple[str, str, str]]) -> bool:
    key = key_of(obj)
    return (key.group, key.kind, key.name) in selected


def plan_operation(state: OperationState, inputs: PlanInputs) -> SyncPlan:
    """The plan of the operation in `state`; ValueError when it cannot be made."""
    started_at = parse_time(state.started_at)
    if started_at is None:
        raise ValueError(
            f"status.operationState.startedAt is not an RFC 3339 time: {state.started_at!r}"
        )
    request = state.request
    selected = request.selected
    desired, live = list(inputs.desired), list(inputs.live.values())
    if selected:
        desired = [o for o in desired if _is_selected(o, selected)]
        live = [o for o in live if _is_selected(o, selected)]
    plan = plan_sync(
        desired,
        live,
        options=inputs.options,
        # Desired objects carry their namespaces already (prepare_desired); the namespace is
        # for CreateNamespace, and `cluster_scoped` keeps it off cluster-scoped custom kinds.
        namespace=inputs.namespace if inputs.options.create_namespace else "",
        cluster_scoped=inputs.cluster_scoped,
        prune=request.prune,
        prune_confirmed=inputs.prune_confirmed,
        modified=inputs.modified,
        revision=request.revision,
        started_at=started_at,
        skip_hooks=bool(selected),
        existing_namespaces=inputs.existing_namespaces,
    )
    return _with_namespace_metadata(plan, inputs)


def _with_namespace_metadata(plan: SyncPlan, inputs: PlanInputs) -> SyncPlan:
    """CreateNamespace with `managedNamespaceMetadata`: the created namespace carries its
    labels and annotations."""
    extra = inputs.namespace_metadata or {}
    if not extra or not inputs.namespace:
        return plan
    tasks = []
    for task in plan.tasks:
        created = task.key.kind == "Namespace" and task.key.name == inputs.namespace
        if created and task.phase is SyncPhase.PRE_SYNC and task.target is not None:
            meta = dict(task.target.get("metadata") or {})
            for part in ("labels", "annotations"):
                if extra.get(part):
                    meta[part] = {**(meta.get(part) or {}), **extra[part]}
            tasks.append(replace(task, target={**task.target, "metadata": meta}))
        else:
            tasks.append(task)
    return replace(plan, tasks=tuple(tasks))
