"""The contract suite's backends: every test here runs once per backend in `BACKENDS`.

A backend is a `ClusterFactory`: it opens a `Cluster` over some storage and can open it
again (a restart, or a second client). To plug in another backend (Kubernetes against a
fake API server), add a factory class and its name to `BACKENDS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from cluster.contract.workers import open_kube
from headway.clock import SystemClock, VirtualClock
from headway.cluster.kube import KubeCluster
from headway.cluster.local import LocalCluster
from headway.cluster.local.kubeapi.server import ApiServer
from headway.cluster.local.kubeapi.watchstream import WatchSettings
from headway.cluster.protocol import Cluster


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


BACKENDS = ["local", "kube"]


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
    else:  # pragma: no cover - a backend name without a factory
        raise AssertionError(request.param)
    yield made
    made.close_all()


@pytest.fixture
def cluster(factory: ClusterFactory) -> Cluster:
    return factory.open()
