"""State survives reopening, and clients in two processes write without corrupting it."""

from __future__ import annotations

import multiprocessing

from cluster.contract.conftest import ClusterFactory
from cluster.contract.objects import configmap, deployment, owned_by
from cluster.contract.workers import increment_and_create
from headway.cluster.protocol import Cluster, WatchEventType


def test_state_survives_reopening(factory: ClusterFactory) -> None:
    first = factory.open()
    first.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
                field_manager="test")
    made = first.apply(deployment("web", namespace="prod"), field_manager="git")
    first.patch_status("apps/v1", "Deployment", "web", "prod", {"replicas": 1})
    owner = first.apply(configmap("owner"), field_manager="test")
    first.apply(owned_by(configmap("child"), owner), field_manager="test")
    factory.close_all()

    second = factory.open()
    again = second.get("apps/v1", "Deployment", "web", "prod")
    assert again["metadata"]["uid"] == made["metadata"]["uid"]
    assert again["status"] == {"replicas": 1}
    assert again["metadata"]["managedFields"] == made["metadata"]["managedFields"]
    later = second.apply(configmap("later"), field_manager="test")
    assert int(later["metadata"]["resourceVersion"]) > int(again["metadata"]["resourceVersion"])
    events = list(second.watch("apps/v1", "Deployment",
                               resource_version=made["metadata"]["resourceVersion"]))
    assert [e.type for e in events] == [WatchEventType.MODIFIED]  # the status write
    second.delete("v1", "ConfigMap", "owner")
    assert [o["metadata"]["name"] for o in second.list("v1", "ConfigMap")] == ["later"]


def test_two_processes_write_without_corruption(factory: ClusterFactory) -> None:
    cluster: Cluster = factory.open()
    start = cluster.apply(configmap("counter", {"n": "0"}), field_manager="counter")
    increments, creates = 40, 15
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        results = [
            pool.apply_async(increment_and_create,
                             (factory.client_spec(), worker, increments, creates))
            for worker in (1, 2)
        ]
        for result in results:
            result.get(timeout=120)

    assert cluster.get("v1", "ConfigMap", "counter")["data"] == {"n": str(2 * increments)}
    for worker in (1, 2):
        mine = cluster.list("v1", "ConfigMap", label_selector={"worker": str(worker)})
        assert len(mine) == creates
    events = list(cluster.watch("v1", "ConfigMap",
                                resource_version=start["metadata"]["resourceVersion"]))
    versions = [int(e.resource_version) for e in events]
    assert versions == sorted(set(versions))
    assert len(events) == 2 * (increments + creates)
