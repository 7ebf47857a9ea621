"""Deletion with finalizers and owner references, for each propagation policy."""

from __future__ import annotations

import pytest

from cluster.contract.objects import configmap, deployment, owned_by
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def exists(cluster: Cluster, name: str) -> bool:
    try:
        cluster.get("v1", "ConfigMap", name)
    except NotFound:
        return False
    return True


def family(cluster: Cluster, *, block: bool = True) -> tuple[Obj, Obj, Obj]:
    """owner <- child <- grandchild, as ConfigMaps."""
    owner = cluster.apply(configmap("owner"), field_manager="test")
    child = cluster.apply(owned_by(configmap("child"), owner, block=block), field_manager="test")
    grandchild = cluster.apply(owned_by(configmap("grandchild"), child, block=block),
                               field_manager="test")
    return owner, child, grandchild


def test_background_deletes_owner_then_dependents(cluster: Cluster) -> None:
    family(cluster)
    start = cluster.apply(configmap("marker"), field_manager="test")["metadata"]
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Background")
    assert [exists(cluster, n) for n in ("owner", "child", "grandchild")] == [False] * 3
    deleted = [e.object["metadata"]["name"] for e in cluster.watch(
        "v1", "ConfigMap", resource_version=start["resourceVersion"]) if e.type == "DELETED"]
    assert deleted == ["owner", "child", "grandchild"]


def test_dependent_with_another_live_owner_survives(cluster: Cluster) -> None:
    first = cluster.apply(configmap("first"), field_manager="test")
    second = cluster.apply(configmap("second"), field_manager="test")
    shared = owned_by(owned_by(configmap("shared"), first), second)
    cluster.apply(shared, field_manager="test")
    cluster.delete("v1", "ConfigMap", "first")
    assert exists(cluster, "shared")
    cluster.delete("v1", "ConfigMap", "second")
    assert not exists(cluster, "shared")


def test_foreground_waits_for_blocking_dependents(cluster: Cluster) -> None:
    family(cluster)
    holder = owned_by(configmap("held", finalizers=["example.com/hold"]),
                      cluster.get("v1", "ConfigMap", "owner"), block=True)
    cluster.apply(holder, field_manager="holder")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    owner = cluster.get("v1", "ConfigMap", "owner")
    assert "deletionTimestamp" in owner["metadata"]
    assert "foregroundDeletion" in owner["metadata"]["finalizers"]
    assert not exists(cluster, "child")
    assert not exists(cluster, "grandchild")
    held = cluster.get("v1", "ConfigMap", "held")
    assert "deletionTimestamp" in held["metadata"]
    held_spec = configmap("held")
    held_spec["metadata"]["ownerReferences"] = held["metadata"]["ownerReferences"]
    cluster.apply(held_spec, field_manager="holder")  # the last blocker lets go
    assert not exists(cluster, "held")
    assert not exists(cluster, "owner")


def test_foreground_does_not_wait_for_non_blocking_dependents(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner"), field_manager="test")
    lingering = owned_by(configmap("loose", finalizers=["example.com/hold"]), owner,
                         block=False)
    cluster.apply(lingering, field_manager="test")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    assert not exists(cluster, "owner")
    assert "deletionTimestamp" in cluster.get("v1", "ConfigMap", "loose")["metadata"]


def test_orphan_keeps_dependents_without_the_reference(cluster: Cluster) -> None:
    family(cluster)
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Orphan")
    assert not exists(cluster, "owner")
    child = cluster.get("v1", "ConfigMap", "child")
    assert "ownerReferences" not in child["metadata"]
    assert exists(cluster, "grandchild")


def test_owner_with_a_finalizer_keeps_dependents_until_gone(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner", finalizers=["example.com/x"]),
                          field_manager="ctl")
    cluster.apply(owned_by(configmap("child"), owner), field_manager="test")
    cluster.delete("v1", "ConfigMap", "owner")
    assert exists(cluster, "child")
    cluster.apply(configmap("owner"), field_manager="ctl")
    assert not exists(cluster, "owner")
    assert not exists(cluster, "child")


def test_dependent_of_a_missing_owner_is_collected(cluster: Cluster) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}}
    cluster.apply(owned_by(configmap("orphaned"), ghost), field_manager="test")
    assert not exists(cluster, "orphaned")


def test_cross_kind_cascade(cluster: Cluster) -> None:
    dep = cluster.apply(deployment("web"), field_manager="test")
    replicaset = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {"name": "web-abc", "namespace": "default"},
                  "spec": {"replicas": 1}}
    rs = cluster.apply(owned_by(replicaset, dep, block=True), field_manager="test")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-abc-1"},
           "spec": {"containers": [{"name": "main", "image": "web:1"}]}}
    cluster.apply(owned_by(pod, rs, block=True), field_manager="test")
    cluster.delete("apps/v1", "Deployment", "web", propagation_policy="Foreground")
    assert cluster.list("apps/v1", "ReplicaSet") == []
    assert cluster.list("v1", "Pod") == []
    with pytest.raises(NotFound):
        cluster.get("apps/v1", "Deployment", "web")


def test_dropping_the_owner_reference_unblocks_a_foreground_owner(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner"), field_manager="test")
    blocker = owned_by(configmap("blocker", finalizers=["example.com/hold"]), owner, block=True)
    cluster.apply(blocker, field_manager="ctl")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    assert exists(cluster, "owner")
    # The dependent lets go of its owner (and keeps its own finalizer).
    cluster.apply(configmap("blocker", finalizers=["example.com/hold"]), field_manager="ctl")
    assert not exists(cluster, "owner")
    assert exists(cluster, "blocker")


def test_deleting_the_last_blocker_directly_releases_the_owner(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner"), field_manager="test")
    blocker = owned_by(configmap("blocker", finalizers=["example.com/hold"]), owner, block=True)
    cluster.apply(blocker, field_manager="ctl")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    # Another client finishes the blocker off: drops its finalizer, then deletes it again.
    cluster.apply(owned_by(configmap("blocker"), owner, block=True), field_manager="ctl")
    assert not exists(cluster, "blocker")
    assert not exists(cluster, "owner")


def test_foreground_spares_a_dependent_with_another_owner(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner"), field_manager="test")
    other = cluster.apply(configmap("other"), field_manager="test")
    shared = owned_by(owned_by(configmap("shared"), owner, block=True), other)
    cluster.apply(shared, field_manager="test")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    assert not exists(cluster, "owner")
    kept = cluster.get("v1", "ConfigMap", "shared")
    assert [r["name"] for r in kept["metadata"]["ownerReferences"]] == ["other"]


def test_dependent_created_during_foreground_deletion_is_collected(cluster: Cluster) -> None:
    owner = cluster.apply(configmap("owner"), field_manager="test")
    cluster.apply(owned_by(configmap("held", finalizers=["example.com/x"]), owner, block=True),
                  field_manager="ctl")
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    waiting = cluster.get("v1", "ConfigMap", "owner")
    cluster.apply(owned_by(configmap("late"), waiting, block=True), field_manager="test")
    assert not exists(cluster, "late")


def test_foreground_cascade_events(cluster: Cluster) -> None:
    start = cluster.apply(configmap("start"), field_manager="test")["metadata"]
    family(cluster)
    cluster.delete("v1", "ConfigMap", "owner", propagation_policy="Foreground")
    seen = [(e.type.value, e.object["metadata"]["name"]) for e in cluster.watch(
        "v1", "ConfigMap", resource_version=start["resourceVersion"]) if e.type != "ADDED"]
    # Owner and child are marked and wait; the leaf goes at once; then each owner follows.
    assert seen == [
        ("MODIFIED", "owner"), ("MODIFIED", "child"), ("DELETED", "grandchild"),
        ("DELETED", "child"), ("DELETED", "owner"),
    ]
