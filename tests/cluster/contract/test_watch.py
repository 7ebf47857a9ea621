"""Watch: initial state, resume after a version, filtering, waiting for new events."""

from __future__ import annotations

import threading

from cluster.contract.conftest import ClusterFactory
from cluster.contract.objects import configmap, deployment
from headway.cluster.protocol import Cluster, WatchEventType
from headway.model.obj import Obj


def test_watch_without_version_lists_current_objects(cluster: Cluster) -> None:
    cluster.apply(configmap("a"), field_manager="test")
    cluster.apply(configmap("b"), field_manager="test")
    cluster.delete("v1", "ConfigMap", "a")
    events = list(cluster.watch("v1", "ConfigMap"))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        (WatchEventType.ADDED, "b")
    ]


def test_watch_resumes_after_a_version(cluster: Cluster) -> None:
    first = cluster.apply(configmap("a"), field_manager="test")
    cluster.apply(configmap("a", {"k": "v"}), field_manager="test")
    cluster.apply(configmap("b"), field_manager="test")
    cluster.delete("v1", "ConfigMap", "a")
    events = list(cluster.watch("v1", "ConfigMap",
                                resource_version=first["metadata"]["resourceVersion"]))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        (WatchEventType.MODIFIED, "a"),
        (WatchEventType.ADDED, "b"),
        (WatchEventType.DELETED, "a"),
    ]
    assert events[-1].object["data"] == {"k": "v"}  # the last state of what was deleted
    middle = events[0].resource_version
    rest = list(cluster.watch("v1", "ConfigMap", resource_version=middle))
    assert [e.type for e in rest] == [WatchEventType.ADDED, WatchEventType.DELETED]
    versions = [int(e.resource_version) for e in events]
    assert versions == sorted(versions)


def test_watch_filters_kind_and_namespace(cluster: Cluster) -> None:
    start = cluster.apply(configmap("start"), field_manager="test")["metadata"]
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
                  field_manager="test")
    cluster.apply(deployment("web"), field_manager="test")
    cluster.apply(deployment("web", namespace="prod"), field_manager="test")
    cluster.apply(configmap("other"), field_manager="test")
    events = list(cluster.watch("apps/v1", "Deployment", namespace="prod",
                                resource_version=start["resourceVersion"]))
    assert [(e.object["metadata"]["namespace"], e.object["kind"]) for e in events] == [
        ("prod", "Deployment")
    ]


def test_watch_waits_for_a_write_from_another_client(factory: ClusterFactory) -> None:
    reader, writer = factory.open(), factory.open()
    start = reader.apply(configmap("start"), field_manager="test")["metadata"]
    thread = threading.Thread(
        target=lambda: writer.apply(configmap("late"), field_manager="test")
    )
    thread.start()
    watch = reader.watch("v1", "ConfigMap", resource_version=start["resourceVersion"],
                         timeout_seconds=30)
    event = next(watch)
    thread.join()
    assert (event.type, event.object["metadata"]["name"]) == (WatchEventType.ADDED, "late")


def test_watch_ends_when_the_timeout_passes_quietly(cluster: Cluster) -> None:
    start = cluster.apply(configmap("a"), field_manager="test")["metadata"]
    quiet = cluster.watch("v1", "ConfigMap", resource_version=start["resourceVersion"],
                          timeout_seconds=0.05)
    assert list(quiet) == []


def test_watch_a_custom_kind_and_deletion_marks(cluster: Cluster) -> None:
    start = cluster.apply(configmap("start"), field_manager="test")["metadata"]
    cluster.apply({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
                 "names": {"kind": "Gadget", "plural": "gadgets"},
                 "versions": [{"name": "v1", "served": True, "storage": True}]},
    }, field_manager="test")
    gadget: Obj = {"apiVersion": "example.com/v1", "kind": "Gadget",
              "metadata": {"name": "g", "finalizers": ["example.com/keep"]}}
    cluster.apply(gadget, field_manager="test")
    cluster.delete("example.com/v1", "Gadget", "g")
    del gadget["metadata"]["finalizers"]
    cluster.apply(gadget, field_manager="test")
    events = list(cluster.watch("example.com/v1", "Gadget",
                                resource_version=start["resourceVersion"]))
    assert [e.type for e in events] == [WatchEventType.ADDED, WatchEventType.MODIFIED,
                                        WatchEventType.DELETED]
    assert "deletionTimestamp" in events[1].object["metadata"]
    assert all(e.object["apiVersion"] == "example.com/v1" for e in events)
