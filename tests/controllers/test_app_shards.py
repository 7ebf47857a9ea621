"""Two Application controllers sharing the work by destination cluster, on a virtual clock:
a management store holding the Applications and two cluster Secrets, each Secret's cluster
its own store. Each controller reconciles (and writes the status of) only the apps whose
cluster its shard owns: the Secret's `shard` when set, else the hash of the Secret's UID;
the in-cluster destination and an unknown one are shard 0's."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from app_harness import APPS_NS, Harness, application, make_harness, manifests

from headway.clock import VirtualClock
from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import Manager
from headway.controllers.sharding import Shards, cluster_shard
from headway.source.git import GitCache

SERVERS = {"east": "https://east.example.com", "west": "https://west.example.com"}


class CountingController(ApplicationController):
    reconciled: Counter[str]

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.reconciled[name] += 1
        return super().reconcile(name, namespace)


def cluster_secret(name: str, **extra: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": f"cluster-{name}", "namespace": APPS_NS,
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": name, "server": SERVERS[name], **extra},
    }


def destination_store(tmp_path: Path, name: str, clock: VirtualClock) -> LocalCluster:
    store = LocalCluster(tmp_path / f"{name}.db", clock)
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
                field_manager="test")
    return store


def app_to(name: str, url: str, destination: dict[str, str]) -> dict[str, Any]:
    app = application(name, url, path=f"apps/{name}", automated={})
    app["spec"]["destination"] = {**destination, "namespace": "demo"}
    return app


def shard_controller(h: Harness, shard: int, stores: dict[str, LocalCluster],
                     tmp_path: Path) -> tuple[CountingController, Manager]:
    def connect(secret: ClusterSecret) -> Cluster:
        return stores[secret.name]

    reader = SourceReader(git=GitCache(tmp_path / f"git-cache-{shard}"), clock=h.clock)
    controller = CountingController(
        store=h.store, clusters=ClusterRegistry(h.store, connect=connect, clock=h.clock),
        sources=reader, clock=h.clock, shards=Shards(shard, 2),
    )
    controller.reconciled = Counter()
    manager = Manager(h.store, h.clock, resync_seconds=30.0)
    manager.register(ApplicationSteps(controller, h.store, apps_namespace=APPS_NS))
    watcher = SourceWatchSteps(controller, reader, h.store)
    watcher.watches = (("v1", "Namespace"), (APP_API_VERSION, "Application"))
    manager.register(watcher)
    return controller, manager


def run_for(managers: list[Manager], clock: VirtualClock, seconds: float) -> None:
    async def loop() -> None:
        for _ in range(int(seconds / 0.5)):
            for manager in managers:
                await manager.run_once()
            clock.advance(0.5)

    asyncio.run(loop())


def exported(controller: ApplicationController) -> set[str]:
    return {sample.labels["name"] for family in controller.metrics.collect()
            if family.name == "headway_app_info" for sample in family.samples}


def config_maps(store: LocalCluster) -> set[str]:
    return {o["metadata"]["name"] for o in store.list("v1", "ConfigMap", namespace="demo")}


def test_each_shard_reconciles_only_the_apps_of_the_clusters_it_owns(tmp_path: Path) -> None:
    clock = VirtualClock()
    apps = ("on-east", "on-west", "in-cluster", "nowhere")
    h = make_harness(tmp_path, clock, {
        f"apps/{n}/cm.yaml": manifests({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": n}}) for n in apps})
    h.store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
                  field_manager="test")
    stores = {name: destination_store(tmp_path, name, clock) for name in SERVERS}
    h.store.apply(cluster_secret("east", shard="1"), field_manager="admin")  # asked for
    h.store.apply(cluster_secret("west"), field_manager="admin")  # by its UID's hash
    west_uid = h.store.get("v1", "Secret", "cluster-west", APPS_NS)["metadata"]["uid"]
    west_shard = cluster_shard(cluster_id=west_uid, requested=None, replicas=2)
    for name, destination in (("on-east", {"name": "east"}),
                              ("on-west", {"server": SERVERS["west"]}),
                              ("in-cluster", {"name": "in-cluster"}),
                              ("nowhere", {"name": "no-such-cluster"})):
        h.install(app_to(name, h.remote.url, destination))
    owner = {"on-east": 1, "on-west": west_shard, "in-cluster": 0, "nowhere": 0}
    first, first_manager = shard_controller(h, 1, stores, tmp_path)

    run_for([first_manager], clock, 20)  # shard 1 alone: the others' apps wait

    mine = {n for n, s in owner.items() if s == 1}
    assert set(first.reconciled) <= set(apps)
    assert {n for n in apps if h.status(n)} == mine  # no status written for another shard
    assert ("on-east" in config_maps(stores["east"])) and ("on-west" in config_maps(
        stores["west"])) == (west_shard == 1)

    zero, zero_manager = shard_controller(h, 0, stores, tmp_path)
    first.reconciled.clear()
    run_for([first_manager, zero_manager], clock, 20)

    assert config_maps(stores["east"]) == {"on-east"}
    assert config_maps(stores["west"]) == {"on-west"}
    assert "in-cluster" in config_maps(h.store)
    nowhere = h.status("nowhere")
    assert "no-such-cluster" in " ".join(c["message"] for c in nowhere["conditions"])
    # The apps each shard stepped and wrote: its own. (It may look at another shard's key
    # when a watch event names it, and lets it go without writing.)
    written = {n: h.app(n)["status"]["sync"]["status"] for n in apps}
    assert written == {"on-east": "Synced", "on-west": "Synced", "in-cluster": "Synced",
                       "nowhere": "Unknown"}
    # Each replica's /metrics shows its own apps.
    assert exported(zero) == {n for n, s in owner.items() if s == 0}
    assert exported(first) == {n for n, s in owner.items() if s == 1}
