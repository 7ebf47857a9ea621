"""One step of a deleted Application, one finalizer at a time (Argo CD's order): its PreDelete
hooks run (`pre-delete-finalizer.argocd.argoproj.io`), then the resources finalizer cascades,
then its PostDelete hooks run (`post-delete-finalizer.argocd.argoproj.io`), then the succeeded
hooks are cleaned up (the `/cleanup` finalizers). Each step persists what it did before the
next acts on it: a live hook records its run, a removed finalizer records a stage done.

Also here: keeping those finalizers on an app that renders delete hooks, which the controller
does at each reconcile before the app is deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from headway import kubetime
from headway.cluster.errors import Conflict, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers import exit_points
from headway.controllers.app import deletion
from headway.controllers.app.live import LiveReader, LiveStateUnknown
from headway.controllers.app.project import ProjectGuard
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.sync_tasks_io import FIELD_MANAGER
from headway.health import HealthRegistry
from headway.model.application import Application
from headway.model.obj import Obj
from headway.sync import delete_hooks, hooks
from headway.sync.comparison import instance_name, prepare_desired
from headway.sync.resources import ResourceKey, key_of

__all__ = ["DeletionEdges", "DeletionTarget", "keep_delete_hook_finalizers", "step_deletion"]

# How soon a deletion that waits for hooks or the cluster looks again.
WAIT_SECONDS = 2.0
# How soon a deletion whose live state the cluster would not give looks again.
LIVE_UNKNOWN_RETRY_SECONDS = 30.0


@dataclass(frozen=True)
class DeletionEdges:
    """What a deletion step needs from the controller running it: its store, sources,
    health and live reads, and its ways to word a condition, record an Event and write
    status (`write(raw, status, wait, app)` returns the wait)."""

    store: Cluster
    sources: SourceReader
    health: HealthRegistry
    reader: Callable[[Cluster], LiveReader]
    cluster_scoped: Callable[[Cluster, Sequence[Obj]], frozenset[tuple[str, str]]]
    condition: Callable[[str, str], dict[str, Any]]
    event: Callable[[Obj, str, str, bool], None]
    write: Callable[[Obj, Obj, float, Application | None], float]
    now: Callable[[], datetime]
    poll_seconds: float
    control_namespace: str


@dataclass(frozen=True)
class DeletionTarget:
    """The deleted app as the step's setup found it."""

    raw: Obj
    app: Application
    cluster: Cluster
    guard: ProjectGuard

    @property
    def finalizers(self) -> list[str]:
        return list(self.raw["metadata"].get("finalizers") or [])


def step_deletion(edges: DeletionEdges, target: DeletionTarget, status: Obj) -> float | None:
    """One step; seconds until the next, None when nothing is left to do (the store removes
    the Application once its last finalizer is gone)."""
    pre, post = hooks.HookType.PRE_DELETE, hooks.HookType.POST_DELETE
    unreadable = deletion.unreadable_deletion_time(target.raw)
    if unreadable is not None:
        status["conditions"] = [edges.condition("DeletionError", unreadable)]
        return edges.write(target.raw, status, edges.poll_seconds, None)
    finalizers = target.finalizers
    if deletion.HOOK_FINALIZERS[pre][0] in finalizers:
        return _run_hooks(edges, target, status, pre)
    finalizer = deletion.cascade_finalizer(target.raw)
    if finalizer is not None:
        return _cascade(edges, target, status, finalizer)
    if deletion.HOOK_FINALIZERS[post][0] in finalizers:
        return _run_hooks(edges, target, status, post)
    for hook_type in (pre, post):
        if deletion.HOOK_FINALIZERS[hook_type][1] in finalizers:
            return _clean_up(edges, target, status, hook_type)
    return None


def _clean_up(
    edges: DeletionEdges, target: DeletionTarget, status: Obj, hook_type: hooks.HookType
) -> float | None:
    """Delete the succeeded hooks whose policy asks for it, then let the `/cleanup`
    finalizer go; a delete the cluster refuses is a DeletionError naming the hook."""
    raw = target.raw
    try:
        live = _live(edges, target)
    except LiveStateUnknown as err:
        status["conditions"] = [edges.condition("DeletionError", str(err))]
        return edges.write(raw, status, LIVE_UNKNOWN_RETRY_SECONDS, None)
    done, problems = deletion.cleanup_delete_hooks(live, target.cluster, hook_type=hook_type)
    if problems:
        message = f"cannot delete the succeeded {hook_type} hooks: " + "; ".join(problems)
        status["conditions"] = [edges.condition("DeletionError", message)]
    else:
        status["conditions"] = []
    if not done:
        return edges.write(raw, status, WAIT_SECONDS, None)
    return _let_go(edges, raw, deletion.HOOK_FINALIZERS[hook_type][1])


def _cascade(
    edges: DeletionEdges, target: DeletionTarget, status: Obj, finalizer: str
) -> float | None:
    """Delete what the app manages and its project permits (as Argo CD): another app's
    object that carries this app's tracking marks outside the project stays."""
    raw, cluster = target.raw, target.cluster
    scoped = replace(target.guard, cluster_scoped=edges.reader(cluster).cluster_scoped())
    try:
        waiting = deletion.cascade_delete(
            raw,
            cluster,
            edges.reader(cluster),
            instance=_instance(edges, raw),
            refuse=scoped.resource,
        )
    except LiveStateUnknown as err:
        status["conditions"] = [edges.condition("DeletionError", str(err))]
        return edges.write(raw, status, LIVE_UNKNOWN_RETRY_SECONDS, None)
    if waiting is not None:
        problem = deletion.deletion_problem(waiting, raw, now=edges.now())
        status["conditions"] = [edges.condition("DeletionError", problem)] if problem else []
        return edges.write(raw, status, WAIT_SECONDS, None)
    return _let_go(edges, raw, finalizer)


def _run_hooks(
    edges: DeletionEdges, target: DeletionTarget, status: Obj, hook_type: hooks.HookType
) -> float | None:
    """The delete hooks of `hook_type` (`sync.delete_hooks`): rendered from Git now, this
    deletion's created, waited for; their finalizer goes once all succeeded."""
    raw, app, cluster = target.raw, target.app, target.cluster
    desired = edges.sources.desired(app, raw)
    if desired.errors:
        finalizer = deletion.HOOK_FINALIZERS[hook_type][0]
        message = (
            f"cannot render the {hook_type} hooks: {'; '.join(desired.errors)}. The deletion "
            "waits until the source renders again (fix it in Git); to delete without running "
            f"these hooks, remove the finalizer {finalizer} from the Application"
        )
        status["conditions"] = [edges.condition("DeletionError", message)]
        return edges.write(raw, status, edges.poll_seconds, app)
    scoped = edges.cluster_scoped(cluster, desired.objects)
    rendered = prepare_desired(
        desired.objects,
        app=_instance(edges, raw),
        namespace=app.spec.destination.namespace or "",
        cluster_scoped=scoped,
    )
    try:
        plan = delete_hooks.plan_delete_hooks(
            rendered,
            _live(edges, target),
            hook_type=hook_type,
            deleted_at=_deletion_time(raw),
            key_of=lambda obj: key_of(obj, cluster_scoped=scoped),
            assess=edges.health.assess,
        )
    except LiveStateUnknown as err:
        status["conditions"] = [edges.condition("DeletionError", str(err))]
        return edges.write(raw, status, LIVE_UNKNOWN_RETRY_SECONDS, app)
    problems = deletion.run_delete_hook_step(
        plan,
        cluster,
        hook_type=hook_type,
        refuse=replace(target.guard, cluster_scoped=scoped).resource,
        created=lambda label: edges.event(raw, f"{hook_type}HookCreated", label, False),
    )
    if problems:
        return _blocked(edges, target, status, problems, hook_type)
    if not plan.done:
        waiting = deletion.hooks_waiting_problem(plan.running, hook_type, raw, now=edges.now())
        note = f"{waiting}. {_BLOCKED[hook_type]}" if waiting else None
        status["conditions"] = [edges.condition("DeletionError", note)] if note else []
        return edges.write(raw, status, WAIT_SECONDS, app)
    exit_points.reached(f"{deletion.EXIT_POINT_PREFIX[hook_type]}-hooks-succeeded")
    edges.event(raw, f"{hook_type}HooksSucceeded", _NEXT[hook_type], False)
    return _let_go(edges, raw, deletion.HOOK_FINALIZERS[hook_type][0])


_NEXT = {
    hooks.HookType.PRE_DELETE: "deleting the application's resources",
    hooks.HookType.POST_DELETE: "removing the application",
}
_BLOCKED = {
    hooks.HookType.PRE_DELETE: "The application's resources are not deleted until every "
    "PreDelete hook succeeded",
    hooks.HookType.POST_DELETE: "The application's resources are deleted; the Application "
    "stays until every PostDelete hook succeeded",
}


def _blocked(
    edges: DeletionEdges,
    target: DeletionTarget,
    status: Obj,
    problems: Sequence[str],
    hook_type: hooks.HookType,
) -> float:
    message = (
        f"{'; '.join(problems)}. {_BLOCKED[hook_type]}: fix the hook in Git (it runs again), "
        "or remove it from Git to go on without it"
    )
    status["conditions"] = [edges.condition("DeletionError", message)]
    edges.event(target.raw, f"{hook_type}HookFailed", message, True)
    return edges.write(target.raw, status, edges.poll_seconds, target.app)


def _live(edges: DeletionEdges, target: DeletionTarget) -> dict[ResourceKey, Obj]:
    return edges.reader(target.cluster).managed(_instance(edges, target.raw), [])


def _instance(edges: DeletionEdges, raw: Obj) -> str:
    name, namespace = str(raw["metadata"]["name"]), str(raw["metadata"].get("namespace"))
    return instance_name(name, namespace, control_namespace=edges.control_namespace)


def _let_go(edges: DeletionEdges, raw: Obj, finalizer: str) -> float | None:
    """Remove `finalizer`: 0 to go on with the next one, None when it was the last."""
    meta = {**raw["metadata"]}
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
    body = {k: v for k, v in raw.items() if k != "status"}
    try:
        edges.store.update({**body, "metadata": meta}, field_manager=FIELD_MANAGER)
    except Conflict:
        return 0.0
    except NotFound:
        return None
    return 0.0 if meta["finalizers"] else None


def keep_delete_hook_finalizers(store: Cluster, raw: Obj, objects: Sequence[Obj]) -> Obj:
    """Add Argo CD's PreDelete (PostDelete) finalizers while the app renders a hook of that
    type (remove them when it no longer does), before the status that shows it synced: a
    deletion must not slip past its hooks. Returns the app as written (as read when nothing
    changed)."""
    meta = raw["metadata"]
    target = deletion.delete_hook_finalizers(meta.get("finalizers") or [], objects)
    if target is None or meta.get("deletionTimestamp"):
        return raw
    body = {k: v for k, v in raw.items() if k != "status"}
    try:
        written = store.update(
            {**body, "metadata": {**meta, "finalizers": target}}, field_manager=FIELD_MANAGER
        )
    except (Conflict, NotFound):
        return raw
    return {**raw, "metadata": written["metadata"]}


def _deletion_time(raw: Obj) -> datetime:
    """When the deletion started; `step_deletion` goes no further with a timestamp that does
    not read as a time (`deletion.unreadable_deletion_time`), so none reaches here."""
    deleted_at = kubetime.parse_time(raw["metadata"].get("deletionTimestamp"))
    if deleted_at is None:
        raise AssertionError("an unreadable deletionTimestamp passed step_deletion")
    return deleted_at
