"""A local cluster serving the CRDs the traffic-routing reconcilers edit, or the same store
through the Kubernetes backend (`backend_cluster`), so a reconciler's writes are checked on
both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from headway.clock import SystemClock, VirtualClock
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.cluster.protocol import Cluster
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


BACKENDS = ("local", "kube")


@contextmanager
def backend_cluster(backend: str, tmp_path: Path, *crds: Obj) -> Iterator[Cluster]:
    """The store directly (`local`), or through the Kubernetes backend against the local
    API server over loopback (`kube`), with `crds` applied."""
    if backend == "local":
        with LocalCluster(tmp_path / "db", VirtualClock()) as store:
            for definition in crds:
                store.apply(definition, field_manager="test")
            yield store
        return
    server = ApiServer(db_path=tmp_path / "db", clock=SystemClock())
    server.start()
    try:
        with KubeCluster(
            Transport(httpx2.Client(base_url=f"http://{server.address}", timeout=30.0))
        ) as kube:
            for definition in crds:
                kube.apply(definition, field_manager="test")
            yield kube
    finally:
        server.stop()


def stored_rollout(cluster: Cluster, name: str = "shop") -> RolloutIdentity:
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
