"""Destinations resolve through cluster Secrets: lazily connected, cached, closed on change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.cluster_registry import ClusterRegistry, UnknownDestination

TOKEN = "never-print-this-token"


def cluster_secret(name: str, server: str, *, secret_name: str | None = None,
                   **extra: str) -> dict[str, Any]:
    data = {"name": name, "server": server, "config": json.dumps({"bearerToken": TOKEN}),
            **extra}
    return {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": secret_name or f"cluster-{name}", "namespace": "argocd",
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": data,
    }


class FakeClient:
    """Stands in for a Kubernetes client: remembers what it was built from and closing."""

    def __init__(self, secret: ClusterSecret) -> None:
        self.secret = secret
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Connector:
    def __init__(self) -> None:
        self.built: list[FakeClient] = []

    def __call__(self, secret: ClusterSecret) -> Cluster:
        client = FakeClient(secret)
        self.built.append(client)
        return client  # type: ignore[return-value]


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    store = LocalCluster(tmp_path / "cluster.db", clock)
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                field_manager="test")
    return store


def _registry(store: LocalCluster, clock: VirtualClock, connect: Connector,
              reports: list[str] | None = None) -> ClusterRegistry:
    sink = reports if reports is not None else []
    return ClusterRegistry(store, connect=connect, clock=clock, report=sink.append)


def test_in_cluster_is_the_store_itself_by_argo_cds_names(
    store: LocalCluster, clock: VirtualClock
) -> None:
    registry = _registry(store, clock, Connector())
    assert registry.resolve(server="https://kubernetes.default.svc/", name=None).cluster is store
    assert registry.resolve(server=None, name="in-cluster").cluster is store


def test_a_secret_cluster_is_connected_on_first_use_then_reused(
    store: LocalCluster, clock: VirtualClock
) -> None:
    connect = Connector()
    store.apply(cluster_secret("prod", "https://prod.example.com"), field_manager="admin")
    registry = _registry(store, clock, connect)
    registry.resolve(server=None, name="in-cluster")
    assert connect.built == []  # nothing connects before a destination needs it
    by_name = registry.resolve(server=None, name="prod")
    by_server = registry.resolve(server="https://prod.example.com/", name=None)
    assert by_name.cluster is by_server.cluster is connect.built[0]
    assert len(connect.built) == 1
    assert connect.built[0].secret.credentials.bearer_token == TOKEN


def test_a_changed_secret_closes_the_old_client_and_a_removed_one_unregisters(
    store: LocalCluster, clock: VirtualClock
) -> None:
    connect = Connector()
    store.apply(cluster_secret("prod", "https://prod.example.com"), field_manager="admin")
    registry = _registry(store, clock, connect)
    first = registry.resolve(server=None, name="prod").cluster
    store.apply(cluster_secret("prod", "https://prod2.example.com"), field_manager="admin")
    clock.advance(3)
    second = registry.resolve(server=None, name="prod")
    assert second.server == "https://prod2.example.com" and second.cluster is not first
    assert connect.built[0].closed and not connect.built[1].closed
    store.delete("v1", "Secret", "cluster-prod", "argocd")
    clock.advance(3)
    with pytest.raises(UnknownDestination, match="there is no cluster with name 'prod'"):
        registry.resolve(server=None, name="prod")
    assert connect.built[1].closed


def test_a_cluster_added_a_moment_ago_is_found_before_the_refresh_interval(
    store: LocalCluster, clock: VirtualClock
) -> None:
    registry = _registry(store, clock, Connector())
    registry.resolve(server=None, name="in-cluster")
    store.apply(cluster_secret("new", "https://new.example.com"), field_manager="admin")
    assert registry.resolve(server=None, name="new").server == "https://new.example.com"


def test_unknown_duplicated_and_doubly_specified_destinations_say_what_is_wrong(
    store: LocalCluster, clock: VirtualClock
) -> None:
    store.apply(cluster_secret("prod", "https://a.example.com", secret_name="a"),
                field_manager="admin")
    store.apply(cluster_secret("prod", "https://b.example.com", secret_name="b"),
                field_manager="admin")
    registry = _registry(store, clock, Connector())
    with pytest.raises(UnknownDestination) as unknown:
        registry.resolve(server="https://nowhere.example.com", name=None)
    assert "known clusters: in-cluster (https://kubernetes.default.svc), prod (" in str(
        unknown.value)
    with pytest.raises(UnknownDestination, match="there are 2 clusters named 'prod'"):
        registry.resolve(server=None, name="prod")
    with pytest.raises(UnknownDestination, match="can't have both name and server"):
        registry.resolve(server="https://a.example.com", name="prod")


def test_a_malformed_secret_is_reported_once_by_field_and_the_others_still_work(
    store: LocalCluster, clock: VirtualClock
) -> None:
    reports: list[str] = []
    broken = cluster_secret("broken", "https://x.example.com", secret_name="broken")
    broken["stringData"]["config"] = '{"bearerToken": ' + TOKEN
    store.apply(broken, field_manager="admin")
    store.apply(cluster_secret("prod", "https://prod.example.com"), field_manager="admin")
    registry = _registry(store, clock, Connector(), reports)
    for _ in range(3):
        clock.advance(5)
        assert registry.resolve(server=None, name="prod").name == "prod"
    assert reports == ["cluster Secret broken: data.config is not JSON (Secret skipped)"]


def test_a_secret_for_the_in_cluster_server_renames_it_and_keeps_the_store(
    store: LocalCluster, clock: VirtualClock
) -> None:
    store.apply(cluster_secret("home", "https://kubernetes.default.svc", namespaces="shop"),
                field_manager="admin")
    connect = Connector()
    registry = _registry(store, clock, connect)
    entry = registry.resolve(server=None, name="home")
    assert (entry.cluster, entry.namespaces) == (store, ("shop",))
    with pytest.raises(UnknownDestination):
        registry.resolve(server=None, name="in-cluster")
    assert connect.built == []


def test_close_closes_every_built_client(store: LocalCluster, clock: VirtualClock) -> None:
    connect = Connector()
    store.apply(cluster_secret("prod", "https://prod.example.com"), field_manager="admin")
    registry = _registry(store, clock, connect)
    registry.resolve(server=None, name="prod")
    registry.close()
    assert [c.closed for c in connect.built] == [True]
