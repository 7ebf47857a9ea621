"""`plan_sync`: from desired and live objects to an ordered sync plan. Purely computational.

Follows gitops-engine's sync-task construction: one task per object and phase, hooks from
desired objects only, prunes for live objects no longer desired (never for hooks), prune
waves mirrored, PruneLast after the last Sync wave, Argo CD's sort, then Namespaces and CRDs
pulled ahead of their dependants.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from headway.diff import AppDiff
from headway.model.obj import Obj
from headway.sync import hooks, ordering
from headway.sync.options import ConfirmableSwitch, SyncOptions, resource_options
from headway.sync.plan import SyncPlan
from headway.sync.resources import ResourceKey, is_namespaced, key_of
from headway.sync.shared import shared_resource_messages
from headway.sync.tasks import Action, Disposition, SyncTask
from headway.sync.waves import wave_of

__all__ = ["PlanRequest", "modified_from_diff", "plan_from_request", "plan_sync"]



@dataclass(frozen=True)
class PlanRequest:
    """Everything about the operation, beyond the objects, that shapes the plan."""

    options: SyncOptions = field(default_factory=SyncOptions)
    namespace: str = ""
    prune: bool = True
    prune_confirmed: bool = False
    modified: Mapping[ResourceKey, bool] | None = None
    revision: str = ""
    started_at: datetime | None = None
    skip_hooks: bool = False
    existing_namespaces: Collection[str] | None = None
    app_name: str = ""
    cluster_scoped: Collection[tuple[str, str]] = ()

    def key(self, obj: Obj) -> ResourceKey:
        return key_of(obj, default_namespace=self.namespace, cluster_scoped=self.cluster_scoped)


def modified_from_diff(app_diff: AppDiff) -> dict[ResourceKey, bool]:
    """The diff's verdicts keyed the way the planner keys resources (cluster-scoped kinds
    without a namespace), for ApplyOutOfSyncOnly."""
    out = {}
    for (group, kind, namespace, name), result in app_diff.resources.items():
        scoped = namespace if is_namespaced(group, kind) else ""
        out[ResourceKey(group, kind, scoped, name)] = result.modified
    return out


def plan_sync(
    desired: Sequence[Obj],
    live: Sequence[Obj],
    *,
    options: SyncOptions | None = None,
    namespace: str = "",
    prune: bool = True,
    prune_confirmed: bool = False,
    modified: Mapping[ResourceKey, bool] | None = None,
    revision: str = "",
    started_at: datetime | None = None,
    skip_hooks: bool = False,
    existing_namespaces: Collection[str] | None = None,
    app_name: str = "",
    cluster_scoped: Collection[tuple[str, str]] = (),
) -> SyncPlan:
    """Plan one sync operation.

    `live` holds the app's managed objects now in the cluster; `modified` is the diff
    verdict per resource (used by ApplyOutOfSyncOnly); `prune` says whether this operation
    prunes at all; `started_at` and `revision` name `generateName` hooks; `app_name` is
    checked against live objects' owners when FailOnSharedResource=true; `cluster_scoped`
    names the kinds discovery says have no namespace (so `namespace` never lands on them)."""
    req = PlanRequest(
        options=options or SyncOptions(),
        namespace=namespace,
        prune=prune,
        prune_confirmed=prune_confirmed,
        modified=modified,
        revision=revision,
        started_at=started_at,
        skip_hooks=skip_hooks,
        existing_namespaces=existing_namespaces,
        app_name=app_name,
        cluster_scoped=cluster_scoped,
    )
    return plan_from_request(desired, live, req)


def plan_from_request(desired: Sequence[Obj], live: Sequence[Obj], req: PlanRequest) -> SyncPlan:
    problems: list[str] = []
    live_by_key = {req.key(obj): obj for obj in live}
    desired_keys = {req.key(o) for o in desired}
    crds = {g for g in (ordering.crd_group_kind(o) for o in desired) if g is not None}
    tasks: list[SyncTask] = []
    for obj in desired:
        tasks.extend(_desired_tasks(obj, live_by_key, crds=crds, req=req, problems=problems))
    for key, obj in sorted(live_by_key.items()):
        if key not in desired_keys and not hooks.is_hook(obj):
            tasks.append(_prune_task(key, obj, req=req, problems=problems))
    tasks.extend(_namespace_task(desired, req))
    ordered = ordering.move_prune_last(ordering.mirror_prune_waves(tasks))
    ordered = ordering.crds_first(ordering.namespaces_first(ordering.sort_tasks(ordered)))
    shared: list[str] = []
    if req.options.fail_on_shared_resource and req.app_name:
        shared = shared_resource_messages(ordered, app_name=req.app_name)
    return SyncPlan(tuple(ordered), tuple(problems), tuple(shared))


def _desired_tasks(
    obj: Obj,
    live_by_key: Mapping[ResourceKey, Obj],
    *,
    crds: Collection[str],
    req: PlanRequest,
    problems: list[str],
) -> list[SyncTask]:
    key = req.key(obj)
    parsed = resource_options(req.options, obj, source=f"{key}: sync-options annotation")
    problems.extend(parsed.problems)
    skip_dry_run = (
        parsed.options.skip_dry_run_on_missing_resource or f"{key.group}/{key.kind}" in crds
    )
    is_hook = hooks.is_hook(obj)
    if is_hook and req.skip_hooks:
        return []
    tasks = []
    for phase in hooks.sync_phases(obj):
        task_key, target = key, obj
        if is_hook:
            task_key, target = _named_hook(obj, key, phase=phase, req=req)
        task = SyncTask(
            action=Action.HOOK if is_hook else Action.APPLY,
            phase=phase,
            wave=wave_of(obj),
            key=task_key,
            target=target,
            live=live_by_key.get(task_key),
            options=parsed.options,
            skip_dry_run=skip_dry_run,
            delete_policies=hooks.delete_policies(obj) if is_hook else frozenset(),
        )
        tasks.append(_skip_if_in_sync(task, req.modified))
    return tasks


def _named_hook(
    obj: Obj, key: ResourceKey, *, phase: hooks.SyncPhase, req: PlanRequest
) -> tuple[ResourceKey, Obj]:
    if key.name:
        return key, obj
    if req.started_at is None:
        raise ValueError(f"{key.kind} hook with generateName needs the operation start time")
    name = hooks.hook_name(obj, revision=req.revision, phase=phase, started_at=req.started_at)
    meta = {**(obj.get("metadata") or {}), "name": name}
    return replace(key, name=name), {**obj, "metadata": meta}


def _skip_if_in_sync(task: SyncTask, modified: Mapping[ResourceKey, bool] | None) -> SyncTask:
    if task.is_hook or not task.options.apply_out_of_sync_only or modified is None:
        return task
    if task.live is not None and modified.get(task.key) is False:
        return replace(task, disposition=Disposition.IN_SYNC)
    return task


def _prune_task(key: ResourceKey, obj: Obj, *, req: PlanRequest, problems: list[str]) -> SyncTask:
    parsed = resource_options(req.options, obj, source=f"{key}: sync-options annotation")
    problems.extend(parsed.problems)
    disposition = Disposition.RUN
    if not req.prune:
        disposition = Disposition.PRUNE_NOT_REQUESTED
    elif parsed.options.prune is ConfirmableSwitch.FALSE:
        disposition = Disposition.PRUNE_DISABLED
    elif parsed.options.prune is ConfirmableSwitch.CONFIRM and not req.prune_confirmed:
        disposition = Disposition.AWAITING_CONFIRMATION
    return SyncTask(
        action=Action.PRUNE,
        phase=hooks.SyncPhase.SYNC,
        wave=wave_of(obj),
        key=key,
        target=None,
        live=obj,
        options=parsed.options,
        disposition=disposition,
    )


def _namespace_task(desired: Sequence[Obj], req: PlanRequest) -> list[SyncTask]:
    """CreateNamespace=true: create the destination namespace first (PreSync), unless the
    app declares it itself or it already exists."""
    name = req.namespace
    if not (req.options.create_namespace and name):
        return []
    declared = any(
        o.get("kind") == "Namespace" and (o.get("metadata") or {}).get("name") == name
        for o in desired
    )
    if declared or (req.existing_namespaces is not None and name in req.existing_namespaces):
        return []
    target = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    key = ResourceKey("", "Namespace", "", name)
    return [SyncTask(Action.APPLY, hooks.SyncPhase.PRE_SYNC, 0, key, target, None, req.options)]
