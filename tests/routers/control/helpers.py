"""A local cluster serving the CRDs the traffic-routing reconcilers edit."""

from __future__ import annotations

from pathlib import Path

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.model.obj import Obj
from headway.routers.control.objects import RolloutIdentity


def crd(*, group: str, kind: str, plural: str, versions: tuple[str, ...]) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural},
            "versions": [
                {"name": v, "served": True, "storage": i == 0} for i, v in enumerate(versions)
            ],
        },
    }


def local_cluster(tmp_path: Path, clock: VirtualClock, *crds: Obj) -> LocalCluster:
    cluster = LocalCluster(tmp_path / "db", clock)
    for definition in crds:
        cluster.apply(definition, field_manager="test")
    return cluster


def stored_rollout(cluster: LocalCluster, name: str = "shop") -> RolloutIdentity:
    """A Rollout in the store, so objects it owns are not garbage-collected at once."""
    rollout = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {},
    }
    stored = cluster.apply(rollout, field_manager="test")
    return RolloutIdentity(name=name, namespace="default", uid=stored["metadata"]["uid"])


def stripped(obj: Obj) -> Obj:
    """The object without the fields the store adds (resourceVersion, uid, managedFields...)."""
    kept = ("name", "namespace", "labels", "annotations", "ownerReferences")
    metadata = {k: v for k, v in obj["metadata"].items() if k in kept}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": metadata}
