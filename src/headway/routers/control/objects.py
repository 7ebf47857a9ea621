"""Reading, writing and owning the objects a traffic-routing reconciler edits.

Shared by the router modules in this package: every cluster error becomes a
`TrafficRoutingError` naming the object, and objects a Rollout creates (a canary Ingress, an
SMI TrafficSplit) carry the controller owner reference Argo Rollouts gives them, so they are
garbage-collected with the Rollout and a reconciler can refuse to edit one it does not own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.routers.control.reconciler import TrafficRoutingError

__all__ = [
    "FIELD_MANAGER",
    "ROLLOUT_API",
    "RolloutIdentity",
    "create_object",
    "delete_object",
    "read_object",
    "read_object_or_none",
    "replace_object",
]

FIELD_MANAGER = "headway-rollouts-controller"
ROLLOUT_API = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class RolloutIdentity:
    """The Rollout whose traffic a reconciler routes: where it lives and how to own things."""

    name: str
    namespace: str
    uid: str

    def owner_reference(self) -> dict[str, Any]:
        """The controller reference Argo puts on objects it creates (`NewControllerRef`)."""
        return {
            "apiVersion": ROLLOUT_API,
            "kind": "Rollout",
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def owns(self, obj: Obj) -> bool:
        refs = (obj.get("metadata") or {}).get("ownerReferences") or []
        return any(r.get("controller") and r.get("uid") == self.uid for r in refs)


def _describe(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name}"


def read_object_or_none(
    cluster: Cluster, *, api_version: str, kind: str, name: str, namespace: str
) -> Obj | None:
    """The object, or None when it does not exist."""
    try:
        return cluster.get(api_version, kind, name, namespace)
    except NotFound:
        return None
    except ClusterError as err:
        raise TrafficRoutingError(f"{_describe(kind, namespace, name)}: {err}") from None


def read_object(cluster: Cluster, *, api_version: str, kind: str, name: str, namespace: str) -> Obj:
    """The object; a missing one is a `TrafficRoutingError` naming it."""
    obj = read_object_or_none(
        cluster, api_version=api_version, kind=kind, name=name, namespace=namespace
    )
    if obj is None:
        raise TrafficRoutingError(f"{_describe(kind, namespace, name)} not found")
    return obj


def replace_object(cluster: Cluster, current: Obj, desired: Obj) -> None:
    """Write `desired` whole (a PUT carrying the resourceVersion read), unless unchanged."""
    if desired == current:
        return
    meta = current.get("metadata") or {}
    try:
        cluster.update(desired, field_manager=FIELD_MANAGER)
    except ClusterError as err:
        where = _describe(
            str(current.get("kind")), str(meta.get("namespace")), str(meta.get("name"))
        )
        raise TrafficRoutingError(f"{where}: {err}") from None


def create_object(cluster: Cluster, obj: Obj) -> None:
    """Create `obj`, which must not exist yet."""
    meta = obj.get("metadata") or {}
    try:
        cluster.apply(obj, field_manager=FIELD_MANAGER)
    except ClusterError as err:
        where = _describe(str(obj.get("kind")), str(meta.get("namespace")), str(meta.get("name")))
        raise TrafficRoutingError(f"{where}: {err}") from None


def delete_object(cluster: Cluster, obj: Obj) -> None:
    """Delete `obj` (this very object: its uid is a precondition); already gone is fine."""
    meta = obj.get("metadata") or {}
    kind, namespace, name = str(obj.get("kind")), str(meta.get("namespace")), str(meta["name"])
    try:
        cluster.delete(str(obj.get("apiVersion")), kind, name, namespace, uid=meta.get("uid"))
    except NotFound:
        return
    except ClusterError as err:
        raise TrafficRoutingError(f"{_describe(kind, namespace, name)}: {err}") from None
