"""get / list / apply / patch_status / delete: the basic object lifecycle."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cluster.contract.objects import configmap, deployment
from headway.cluster.errors import Conflict, Invalid, NotFound, UnknownKind
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def test_apply_creates_with_server_fields(cluster: Cluster,
                                         is_now: Callable[[str], bool]) -> None:
    created = cluster.apply(deployment("web"), field_manager="test")
    meta = created["metadata"]
    assert meta["namespace"] == "default"
    assert meta["uid"]
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert is_now(meta["creationTimestamp"])
    assert cluster.get("apps/v1", "Deployment", "web", "default") == created


def test_get_missing_is_not_found(cluster: Cluster) -> None:
    with pytest.raises(NotFound, match="Deployment default/nope"):
        cluster.get("apps/v1", "Deployment", "nope", "default")


def test_unknown_kind_and_version(cluster: Cluster) -> None:
    with pytest.raises(UnknownKind):
        cluster.get("example.com/v1", "Widget", "w", "default")
    with pytest.raises(UnknownKind):
        cluster.list("apps/v1beta1", "Deployment")
    with pytest.raises(UnknownKind):
        cluster.apply({"apiVersion": "v1", "kind": "Gadget", "metadata": {"name": "g"}},
                      field_manager="test")


def test_resource_versions_increase_across_objects(cluster: Cluster) -> None:
    a = cluster.apply(configmap("a"), field_manager="test")
    b = cluster.apply(configmap("b"), field_manager="test")
    a2 = cluster.apply(configmap("a", {"k": "v"}), field_manager="test")
    versions = [int(o["metadata"]["resourceVersion"]) for o in (a, b, a2)]
    assert versions == sorted(versions)
    assert len(set(versions)) == 3


def test_stale_resource_version_is_rejected(cluster: Cluster) -> None:
    first = cluster.apply(configmap("a", {"k": "1"}), field_manager="test")
    cluster.apply(configmap("a", {"k": "2"}), field_manager="test")
    stale = configmap("a", {"k": "3"}, resourceVersion=first["metadata"]["resourceVersion"])
    with pytest.raises(Conflict, match="stale"):
        cluster.apply(stale, field_manager="test")
    assert cluster.get("v1", "ConfigMap", "a")["data"] == {"k": "2"}


def test_current_resource_version_is_accepted(cluster: Cluster) -> None:
    live = cluster.apply(configmap("a", {"k": "1"}), field_manager="test")
    fresh = configmap("a", {"k": "2"}, resourceVersion=live["metadata"]["resourceVersion"])
    assert cluster.apply(fresh, field_manager="test")["data"] == {"k": "2"}


def test_generation_moves_only_with_spec(cluster: Cluster) -> None:
    created = cluster.apply(deployment("web"), field_manager="test")
    relabelled = deployment("web", labels={"app": "web", "tier": "front"})
    after_meta = cluster.apply(relabelled, field_manager="test")
    after_status = cluster.patch_status("apps/v1", "Deployment", "web", "default",
                                        {"replicas": 1})
    changed = deployment("web", image="web:2", labels={"app": "web", "tier": "front"})
    after_spec = cluster.apply(changed, field_manager="test")
    generations = [o["metadata"]["generation"] for o in (created, after_meta, after_status,
                                                         after_spec)]
    assert generations == [1, 1, 1, 2]
    versions = [int(o["metadata"]["resourceVersion"]) for o in (created, after_meta,
                                                                 after_status, after_spec)]
    assert versions == sorted(set(versions))


def test_unchanged_apply_does_not_write(cluster: Cluster) -> None:
    first = cluster.apply(deployment("web"), field_manager="test")
    again = cluster.apply(deployment("web"), field_manager="test")
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_apply_never_writes_status(cluster: Cluster) -> None:
    obj = deployment("web")
    obj["status"] = {"replicas": 99}
    created = cluster.apply(obj, field_manager="test")
    assert "status" not in created
    cluster.patch_status("apps/v1", "Deployment", "web", "default", {"replicas": 1})
    obj["spec"]["replicas"] = 3
    updated = cluster.apply(obj, field_manager="test")
    assert updated["status"] == {"replicas": 1}
    assert updated["spec"]["replicas"] == 3


def test_patch_status_never_writes_spec(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="test")
    patched = cluster.patch_status("apps/v1", "Deployment", "web", "default",
                                   {"readyReplicas": 2})
    assert patched["spec"]["replicas"] == 2
    assert patched["status"] == {"readyReplicas": 2}
    replaced = cluster.patch_status("apps/v1", "Deployment", "web", "default",
                                    {"replicas": 2})
    assert replaced["status"] == {"replicas": 2}


def test_patch_status_precondition(cluster: Cluster) -> None:
    live = cluster.apply(deployment("web"), field_manager="test")
    rv = live["metadata"]["resourceVersion"]
    cluster.patch_status("apps/v1", "Deployment", "web", "default", {"replicas": 1},
                         resource_version=rv)
    with pytest.raises(Conflict):
        cluster.patch_status("apps/v1", "Deployment", "web", "default", {"replicas": 2},
                             resource_version=rv)
    with pytest.raises(NotFound):
        cluster.patch_status("apps/v1", "Deployment", "gone", "default", {})


def test_list_by_kind_namespace_and_labels(cluster: Cluster) -> None:
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
                  field_manager="test")
    cluster.apply(deployment("web", labels={"app": "web", "tier": "front"}),
                  field_manager="test")
    cluster.apply(deployment("api", labels={"app": "api", "tier": "back"}),
                  field_manager="test")
    cluster.apply(deployment("web", namespace="prod", labels={"app": "web"}),
                  field_manager="test")
    cluster.apply(configmap("web", labels={"app": "web"}), field_manager="test")

    def names(**kw: object) -> list[str]:
        found = cluster.list("apps/v1", "Deployment", **kw)  # type: ignore[arg-type]
        return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in found)

    assert names() == ["default/api", "default/web", "prod/web"]
    assert names(namespace="prod") == ["prod/web"]
    assert names(label_selector={"app": "web"}) == ["default/web", "prod/web"]
    assert names(label_selector="tier in (front,back),app!=api") == ["default/web"]
    assert names(label_selector="!tier") == ["prod/web"]
    assert names(label_selector="tier") == ["default/api", "default/web"]


def test_bad_label_selector_is_invalid(cluster: Cluster) -> None:
    with pytest.raises(Invalid, match="label selector"):
        cluster.list("apps/v1", "Deployment", label_selector="app in (web")


def test_namespace_must_exist(cluster: Cluster) -> None:
    with pytest.raises(NotFound, match="namespace 'prod'"):
        cluster.apply(deployment("web", namespace="prod"), field_manager="test")
    cluster.apply(deployment("web", namespace="kube-system"), field_manager="test")
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
                  field_manager="test")
    assert cluster.apply(deployment("web", namespace="prod"), field_manager="test")


def test_cluster_scoped_kinds_reject_a_namespace(cluster: Cluster) -> None:
    role: Obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader", "namespace": "default"}, "rules": []}
    with pytest.raises(Invalid, match="cluster-scoped"):
        cluster.apply(role, field_manager="test")
    del role["metadata"]["namespace"]
    created = cluster.apply(role, field_manager="test")
    assert "namespace" not in created["metadata"]
    with pytest.raises(Invalid, match="cluster-scoped"):
        cluster.get("rbac.authorization.k8s.io/v1", "ClusterRole", "reader", "default")


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({}, "metadata.name"),
        ({"name": "Bad_Name"}, "metadata.name"),
        ({"name": "ok", "labels": {"app": 3}}, "metadata.labels"),
        ({"name": "ok", "labels": {"bad key": "x"}}, "metadata.labels"),
        ({"name": "ok", "finalizers": "x"}, "metadata.finalizers"),
        ({"name": "ok", "ownerReferences": [{"kind": "X"}]}, "metadata.ownerReferences"),
    ],
)
def test_malformed_objects_are_invalid(cluster: Cluster, metadata: dict[str, object],
                                       field: str) -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    with pytest.raises(Invalid, match=field.replace(".", r"\.")):
        cluster.apply(obj, field_manager="test")


def test_delete_without_finalizers_removes_at_once(cluster: Cluster) -> None:
    cluster.apply(configmap("a"), field_manager="test")
    cluster.delete("v1", "ConfigMap", "a")
    with pytest.raises(NotFound):
        cluster.get("v1", "ConfigMap", "a")
    with pytest.raises(NotFound):
        cluster.delete("v1", "ConfigMap", "a")


def test_finalizers_hold_deletion_until_removed(cluster: Cluster,
                                               is_now: Callable[[str], bool]) -> None:
    cluster.apply(configmap("a", finalizers=["example.com/cleanup"]), field_manager="ctl")
    cluster.delete("v1", "ConfigMap", "a")
    held = cluster.get("v1", "ConfigMap", "a")
    assert is_now(held["metadata"]["deletionTimestamp"])
    cluster.apply(configmap("a"), field_manager="ctl")  # the manager drops its finalizer
    with pytest.raises(NotFound):
        cluster.get("v1", "ConfigMap", "a")


def test_deletion_bumps_generation_and_forbids_new_finalizers(cluster: Cluster) -> None:
    created = cluster.apply(configmap("a", finalizers=["example.com/x"]), field_manager="ctl")
    cluster.delete("v1", "ConfigMap", "a")
    marked = cluster.get("v1", "ConfigMap", "a")
    assert marked["metadata"]["generation"] == created["metadata"]["generation"] + 1
    with pytest.raises(Invalid, match="no new finalizers"):
        cluster.apply(configmap("a", finalizers=["example.com/y"]), field_manager="other")
    cluster.apply(configmap("a"), field_manager="ctl")  # removing the last one is fine
    with pytest.raises(NotFound):
        cluster.get("v1", "ConfigMap", "a")
