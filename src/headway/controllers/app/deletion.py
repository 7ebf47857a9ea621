"""Deleting an Application: Argo CD's resources finalizer cascades to its resources.

With `resources-finalizer.argocd.argoproj.io` (foreground) or
`resources-finalizer.argocd.argoproj.io/background` on a deleted Application, every resource
it manages is deleted first - except those marked `Delete=false` in their
`argocd.argoproj.io/sync-options`, which are left alone, those marked `Delete=confirm`,
which wait for `headway app confirm-prune` (the `deletion-approved` annotation, as Argo CD),
and objects outside the app's project, which are never its to delete. Then the finalizer
is removed and the Application goes. Without a finalizer nothing cascades.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from headway import kubetime
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster, PropagationPolicy
from headway.controllers.app import operations as ops
from headway.controllers.app.live import LiveReader
from headway.sync.options import ConfirmableSwitch, SyncOptions, resource_options

__all__ = [
    "DELETION_PATIENCE_SECONDS",
    "RESOURCES_FINALIZER",
    "RESOURCES_FINALIZER_BACKGROUND",
    "cascade_delete",
    "deletion_problem",
]

# A real API server deletes asynchronously: foreground deletion holds an object until the
# garbage collector removed its dependents, and finalizers hold it until their controller
# lets go. Waiting is normal; waiting this long without the objects going gets a condition.
DELETION_PATIENCE_SECONDS = 120.0

RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
RESOURCES_FINALIZER_BACKGROUND = "resources-finalizer.argocd.argoproj.io/background"


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
        if refuse(obj) is not None:
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


def _holders(obj: Mapping[str, Any]) -> str:
    finalizers = (obj.get("metadata") or {}).get("finalizers") or []
    return f", held by finalizers {', '.join(map(str, finalizers))}" if finalizers else ""


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
    return (f"still waiting after {int(elapsed)}s for the cluster to delete: "
            + "; ".join(items))
