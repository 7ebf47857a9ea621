"""The contract suite's backends: every test here runs once per backend in `BACKENDS`.

A backend is a `ClusterFactory`: it opens a `Cluster` over some storage and can open it
again (a restart, or a second client). To plug in another backend (Kubernetes against a
fake API server), add a factory class and its name to `BACKENDS`.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from cluster.contract.workers import open_kube
from headway.clock import SystemClock, VirtualClock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.kube import KubeCluster
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.cluster.local.api.kubeapi.watchstream import WatchSettings
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


class ClusterFactory(Protocol):
    name: str

    def open(self) -> Cluster:
        """A new client of the same cluster (for the local store: the same file)."""
        ...

    def close_all(self) -> None: ...

    def forget_history(self) -> None:
        """Make the cluster forget every watch event so far (etcd's compaction), so a
        resourceVersion or continue token from before is too old to resume from."""
        ...

    def client_spec(self) -> tuple[str, str]:
        """A picklable description from which another process opens a client
        (`workers.open_client`)."""
        ...


class LocalFactory:
    name = "local"

    def __init__(self, path: Path, clock: VirtualClock) -> None:
        self.path = path
        self.clock = clock
        self._opened: list[LocalCluster] = []

    def open(self) -> Cluster:
        cluster = LocalCluster(self.path, self.clock)
        self._opened.append(cluster)
        return cluster

    def close_all(self) -> None:
        for cluster in self._opened:
            cluster.close()

    def forget_history(self) -> None:
        with LocalCluster(self.path, self.clock) as store:
            store.compact(keep=0)

    def client_spec(self) -> tuple[str, str]:
        return ("local", str(self.path))


class KubeFactory:
    """The Kubernetes backend against the local runtime's API server over loopback: the
    HTTP server reads and writes a store file; compaction is done on the file."""

    name = "kube"

    def __init__(self, path: Path, clock: VirtualClock) -> None:
        self.path = path
        self.server = ApiServer(db_path=path, clock=clock,
                                watch=WatchSettings(bookmark_seconds=0.2, poll_seconds=0.02))
        self.server.start()
        self._opened: list[KubeCluster] = []

    @property
    def url(self) -> str:
        return f"http://{self.server.address}"

    def open(self) -> Cluster:
        cluster = open_kube(self.url)
        self._opened.append(cluster)
        return cluster

    def close_all(self) -> None:
        for cluster in self._opened:
            cluster.close()
        self._opened.clear()

    def stop(self) -> None:
        self.close_all()
        self.server.stop()

    def forget_history(self) -> None:
        with LocalCluster(self.path, SystemClock()) as store:
            store.compact(keep=0)

    def client_spec(self) -> tuple[str, str]:
        return ("kube", self.url)


class RealClusterFactory:
    """A real cluster from `HEADWAY_TEST_KUBECONFIG` (and `HEADWAY_TEST_CONTEXT`), as
    `scripts/verify-on-cluster` runs it. Use a throwaway cluster (kind, k3s): the tests
    write into `default` and create CRDs. Its history cannot be compacted on demand."""

    name = "cluster"

    def __init__(self) -> None:
        self.kubeconfig = Path(os.environ[KUBECONFIG_ENV])
        self.context = os.environ.get(CONTEXT_ENV) or None
        self._opened: list[KubeCluster] = []

    def open(self) -> Cluster:
        cluster = KubeCluster.connect(self.kubeconfig, self.context)
        self._opened.append(cluster)
        return cluster

    def wipe(self) -> None:
        """Remove what the test left (each test expects an empty cluster)."""
        with KubeCluster.connect(self.kubeconfig, self.context) as cluster:
            wipe_test_objects(cluster)

    def close_all(self) -> None:
        for cluster in self._opened:
            cluster.close()
        self._opened.clear()

    def forget_history(self) -> None:
        pytest.skip("a real cluster's etcd history cannot be compacted on demand")

    def client_spec(self) -> tuple[str, str]:
        return ("kubeconfig", f"{self.kubeconfig}|{self.context or ''}")


WIPED_KINDS = [("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"), ("v1", "Pod"),
               ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")]
KEPT = {"kube-root-ca.crt"}  # the cluster's own objects in `default`


def _release(cluster: KubeCluster, obj: Obj) -> None:
    """Delete an object a test left, dropping the finalizers that would hold it."""
    meta = obj["metadata"]
    with contextlib.suppress(ClusterError):
        if meta.get("finalizers"):
            cluster.update({**obj, "metadata": {**meta, "finalizers": []}},
                           field_manager="contract-cleanup")
        cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))


def wipe_test_objects(cluster: KubeCluster) -> None:
    """What the contract tests create on a real cluster: objects in `default`, the `prod`
    namespace, custom kinds of group example.com (each test expects an empty cluster);
    waits (bounded) for the server's asynchronous garbage collection."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = [o for api_version, kind in WIPED_KINDS
                for o in cluster.list(api_version, kind, namespace="default")
                if o["metadata"]["name"] not in KEPT
                and not o["metadata"]["name"].startswith("default-token")]
        if not left:
            break
        for obj in left:
            _release(cluster, obj)
        time.sleep(0.5)
    for crd in cluster.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
        if crd["metadata"]["name"].endswith(".example.com"):
            with contextlib.suppress(ClusterError):
                cluster.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                               crd["metadata"]["name"])
    with contextlib.suppress(ClusterError):
        cluster.delete("v1", "Namespace", "prod")
    while time.monotonic() < deadline:  # a namespace terminates asynchronously
        try:
            cluster.get("v1", "Namespace", "prod")
        except NotFound:
            break
        time.sleep(0.5)


KUBECONFIG_ENV, CONTEXT_ENV = "HEADWAY_TEST_KUBECONFIG", "HEADWAY_TEST_CONTEXT"
# With a real cluster named, the suite runs on it alone (scripts/verify-on-cluster).
BACKENDS = ["cluster"] if os.environ.get(KUBECONFIG_ENV) else ["local", "kube"]


@pytest.fixture(params=BACKENDS)
def factory(request: pytest.FixtureRequest, tmp_path: Path, clock: VirtualClock) -> Iterator[
    ClusterFactory
]:
    made: ClusterFactory
    if request.param == "local":
        made = LocalFactory(tmp_path / "store.db", clock)
    elif request.param == "kube":
        kube = KubeFactory(tmp_path / "store.db", clock)
        try:
            yield kube
        finally:
            kube.stop()
        return
    elif request.param == "cluster":
        real = RealClusterFactory()
        try:
            yield real
        finally:
            real.close_all()
            real.wipe()
        return
    else:  # pragma: no cover - a backend name without a factory
        raise AssertionError(request.param)
    yield made
    made.close_all()


RFC3339_SECOND = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture
def is_now(factory: ClusterFactory, clock: VirtualClock) -> Callable[[str], bool]:
    """Whether a timestamp the server set is its "now": the virtual clock's instant on the
    backends that run on it; on a real cluster (whose clock is not the test's), any RFC 3339
    UTC second."""
    if isinstance(factory, RealClusterFactory):
        return lambda stamp: bool(RFC3339_SECOND.match(stamp))
    expected = clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    return lambda stamp: stamp == expected


@pytest.fixture
def cluster(factory: ClusterFactory) -> Cluster:
    return factory.open()
