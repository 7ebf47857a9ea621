"""Deleting an Application: Argo CD's resources finalizer cascades to its resources, after
the app's PreDelete hooks succeeded and before its PostDelete hooks run.

An app whose sources render PreDelete (PostDelete) hooks carries
`pre-delete-finalizer.argocd.argoproj.io` (`post-delete-finalizer.argocd.argoproj.io`) and its
`/cleanup` companion, added while it is not being deleted, as Argo CD adds them. On deletion
the PreDelete hooks run first (`sync.delete_hooks` decides each step); their finalizer is
removed only once every hook succeeded, so nothing is deleted before that, whatever the point
a controller is killed at. The PostDelete hooks run once the cascade is done. The cleanup
finalizers go last, after the hooks whose delete policy says HookSucceeded are gone.

With `resources-finalizer.argocd.argoproj.io` (foreground) or
`resources-finalizer.argocd.argoproj.io/background` on a deleted Application, every resource
it manages is deleted first - except those marked `Delete=false` in their
`argocd.argoproj.io/sync-options` or `helm.sh/resource-policy: keep`, and
CustomResourceDefinitions, which are left alone as Argo CD leaves them, those marked
`Delete=confirm`, which wait for `headway app confirm-prune` (the `deletion-approved`
annotation, as Argo CD), and objects outside the app's project, which are never its to delete.
Then the finalizer is removed and the Application goes. Without a finalizer nothing cascades.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from headway import kubetime
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster, PropagationPolicy
from headway.controllers import exit_points
from headway.controllers.app import operations as ops
from headway.controllers.app.live import LiveReader
from headway.controllers.app.sync_tasks_io import FIELD_MANAGER
from headway.model.obj import Obj
from headway.sync import delete_hooks, hooks
from headway.sync.options import ConfirmableSwitch, SyncOptions, resource_options
from headway.sync.resources import ResourceKey, key_of

__all__ = [
    "DELETION_PATIENCE_SECONDS",
    "HOOK_FINALIZERS",
    "RESOURCES_FINALIZER",
    "RESOURCES_FINALIZER_BACKGROUND",
    "cascade_delete",
    "cleanup_delete_hooks",
    "delete_hook_finalizers",
    "deletion_problem",
    "hooks_waiting_problem",
    "kept_on_app_deletion",
    "run_delete_hook_step",
]

# A real API server deletes asynchronously: foreground deletion holds an object until the
# garbage collector removed its dependents, and finalizers hold it until their controller
# lets go. Waiting is normal; waiting this long without the objects going gets a condition.
DELETION_PATIENCE_SECONDS = 120.0

RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
RESOURCES_FINALIZER_BACKGROUND = "resources-finalizer.argocd.argoproj.io/background"
HELM_RESOURCE_POLICY = "helm.sh/resource-policy"
PRE_DELETE_FINALIZER = "pre-delete-finalizer.argocd.argoproj.io"
POST_DELETE_FINALIZER = "post-delete-finalizer.argocd.argoproj.io"
# Each delete hook type's finalizer (held until its hooks succeeded) and cleanup finalizer
# (held until its HookSucceeded hooks are gone), as Argo CD names them.
HOOK_FINALIZERS = {
    hooks.HookType.PRE_DELETE: (PRE_DELETE_FINALIZER, f"{PRE_DELETE_FINALIZER}/cleanup"),
    hooks.HookType.POST_DELETE: (POST_DELETE_FINALIZER, f"{POST_DELETE_FINALIZER}/cleanup"),
}

# Test exit points: `pre-delete-hook-created`, `post-delete-hooks-succeeded`, ...
EXIT_POINT_PREFIX = {
    hooks.HookType.PRE_DELETE: "pre-delete",
    hooks.HookType.POST_DELETE: "post-delete",
}


def delete_hook_finalizers(finalizers: Sequence[str], objects: Sequence[Obj]) -> list[str] | None:
    """The app's finalizers with each delete hook type's pair present exactly when its
    rendered `objects` hold a hook of that type; None when they already are. Purely
    computational."""
    target = list(finalizers)
    for hook_type, pair in HOOK_FINALIZERS.items():
        wanted = any(hook_type in hooks.hook_types(o) for o in objects)
        target = [f for f in target if f not in pair] + (list(pair) if wanted else [])
    return None if sorted(target) == sorted(finalizers) else target


def run_delete_hook_step(
    plan: delete_hooks.DeleteHookPlan,
    cluster: Cluster,
    *,
    hook_type: hooks.HookType,
    refuse: Callable[[Mapping[str, Any]], str | None],
    created: Callable[[str], None],
) -> list[str]:
    """Carry out one step's plan: delete earlier runs, then create this deletion's hooks
    (`created` hears each one's name). Returns what failed, hooks included."""
    problems = [f"{hook_type} hook {label}" for label in plan.failed]
    for obj in plan.delete:
        problems.extend(_delete_quietly(obj, cluster))
    for hook in plan.create:
        label = delete_hooks.hook_label(key_of(hook))
        refusal = refuse(hook)
        if refusal is not None:
            problems.append(f"{hook_type} hook {label}: {refusal}")
            continue
        try:
            cluster.apply(dict(hook), field_manager=FIELD_MANAGER, force=True)
        except ClusterError as err:
            problems.append(f"{hook_type} hook {label}: {err}")
            continue
        exit_points.reached(f"{EXIT_POINT_PREFIX[hook_type]}-hook-created")  # live: recorded
        created(label)
    return problems


def cleanup_delete_hooks(
    live: Mapping[ResourceKey, Obj], cluster: Cluster, *, hook_type: hooks.HookType
) -> tuple[bool, list[str]]:
    """Delete the succeeded hooks of `hook_type` whose delete policy asks for it
    (HookSucceeded): whether none of those is left, and the deletes the cluster refused."""
    left = False
    problems: list[str] = []
    for obj in live.values():
        if hook_type not in hooks.hook_types(obj):
            continue
        if hooks.DeletePolicy.HOOK_SUCCEEDED not in hooks.delete_policies(obj):
            continue
        left = True
        if not (obj.get("metadata") or {}).get("deletionTimestamp"):
            problems.extend(_delete_quietly(obj, cluster))
    return not left, problems


def _delete_quietly(obj: Mapping[str, Any], cluster: Cluster) -> list[str]:
    key = key_of(obj)
    try:
        cluster.delete(
            str(obj["apiVersion"]),
            key.kind,
            key.name,
            key.namespace or None,
            propagation_policy="Background",
        )
    except NotFound:
        return []
    except ClusterError as err:
        return [f"{delete_hooks.hook_label(key)}: {err}"]
    return []


def cascade_finalizer(app: Mapping[str, Any]) -> str | None:
    finalizers = (app.get("metadata") or {}).get("finalizers") or []
    for name in (RESOURCES_FINALIZER, RESOURCES_FINALIZER_BACKGROUND):
        if name in finalizers:
            return name
    return None


def cascade_delete(
    app: Mapping[str, Any],
    cluster: Cluster,
    reader: LiveReader,
    *,
    instance: str,
    refuse: Callable[[Mapping[str, Any]], str | None],
) -> str | None:
    """Delete what the app manages (tracked under its `instance` name) and its project
    permits (`refuse` says why not); None when done (the finalizer may go), else what is
    still being waited for."""
    finalizer = cascade_finalizer(app)
    policy: PropagationPolicy = (
        "Background" if finalizer == RESOURCES_FINALIZER_BACKGROUND else "Foreground"
    )
    approved = kubetime.parse_time(
        ((app.get("metadata") or {}).get("annotations") or {}).get(ops.CONFIRM_PRUNE_ANNOTATION)
    )
    deleted_at = kubetime.parse_time((app.get("metadata") or {}).get("deletionTimestamp"))
    waiting: list[str] = []
    for key, obj in reader.managed(instance, []).items():
        if refuse(obj) is not None or kept_on_app_deletion(obj):
            continue
        switch = resource_options(SyncOptions(), obj).options.delete
        if switch is ConfirmableSwitch.FALSE:
            continue
        if switch is ConfirmableSwitch.CONFIRM and not (
            approved is not None and deleted_at is not None and approved >= deleted_at
        ):
            waiting.append(f"{key} (waiting for deletion confirmation)")
            continue
        try:
            cluster.delete(
                str(obj["apiVersion"]),
                key.kind,
                key.name,
                key.namespace or None,
                propagation_policy=policy,
            )
        except NotFound:
            continue
        except ClusterError as err:
            waiting.append(f"{key} ({err})")
            continue
        waiting.append(f"{key} (deleting{_holders(obj)})")
    return "; ".join(waiting) if waiting else None


def kept_on_app_deletion(obj: Mapping[str, Any]) -> bool:
    """Whether Argo CD leaves `obj` when its Application is deleted, whatever the finalizer:
    a CustomResourceDefinition (deleting it deletes every object of its kind, in every
    namespace, with it) or an object Helm's `helm.sh/resource-policy: keep` keeps (Argo CD
    reads it as `Delete=false`; argo-helm's charts put it on their CRDs)."""
    if obj.get("kind") == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/"
    ):
        return True
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    policy = annotations.get(HELM_RESOURCE_POLICY) if isinstance(annotations, Mapping) else None
    return isinstance(policy, str) and "keep" in (p.strip() for p in policy.split(","))


def _holders(obj: Mapping[str, Any]) -> str:
    finalizers = (obj.get("metadata") or {}).get("finalizers") or []
    return f", held by finalizers {', '.join(map(str, finalizers))}" if finalizers else ""


def unreadable_deletion_time(app: Mapping[str, Any]) -> str | None:
    """Why the deletion cannot go on, when the app's `metadata.deletionTimestamp` is there
    but not an RFC 3339 time (an API server never writes one; a foreign or hand-made store
    can). The deletion's steps are tied to that moment (the delete hooks of this deletion
    are told apart by it, a confirmation counts only if given after it, the patience before
    a DeletionError counts from it): nothing is deleted and no hook runs on a moment Headway
    cannot read, where taking "now" would start a new run of every hook at each step.
    Purely computational."""
    text = (app.get("metadata") or {}).get("deletionTimestamp")
    if text is None or kubetime.parse_time(text) is not None:
        return None
    return (
        f"metadata.deletionTimestamp {text!r} is not an RFC 3339 time: no delete hook runs "
        "and nothing of this Application is deleted until it reads as one (to let the "
        "Application go without its deletion steps, remove its finalizers)"
    )


def deletion_problem(waiting: str, app: Mapping[str, Any], *, now: datetime) -> str | None:
    """What the DeletionError condition says while a cascade waits, if anything: what blocks
    it (a project, a confirmation, an error) at once; objects the cluster is still deleting
    only once they outlived `DELETION_PATIENCE_SECONDS`. Purely computational."""
    items = waiting.split("; ")
    blocked = [w for w in items if "(deleting" not in w]
    if blocked:
        return "; ".join(blocked)
    deleted_at = kubetime.parse_time((app.get("metadata") or {}).get("deletionTimestamp"))
    if deleted_at is None:
        return None
    elapsed = (now - deleted_at).total_seconds()
    if elapsed < DELETION_PATIENCE_SECONDS:
        return None
    return f"still waiting after {int(elapsed)}s for the cluster to delete: " + "; ".join(items)


def hooks_waiting_problem(
    running: Sequence[str], hook_type: hooks.HookType, app: Mapping[str, Any], *, now: datetime
) -> str | None:
    """What the DeletionError condition says while delete hooks are waited for: nothing until
    the deletion outlived `DELETION_PATIENCE_SECONDS`, then the hooks still waited for (a
    hook stuck Progressing or Suspended would otherwise hold the app with no word of why).
    Purely computational."""
    deleted_at = kubetime.parse_time((app.get("metadata") or {}).get("deletionTimestamp"))
    if not running or deleted_at is None:
        return None
    elapsed = (now - deleted_at).total_seconds()
    if elapsed < DELETION_PATIENCE_SECONDS:
        return None
    return (
        f"the deletion started {int(elapsed)}s ago and still waits for its {hook_type} "
        "hooks: " + "; ".join(running)
    )
