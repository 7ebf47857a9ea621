"""Server-side apply: field ownership, removal of omitted fields, conflicts and force."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cluster.contract.objects import configmap, deployment
from headway.cluster.errors import FieldConflict, Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def containers(obj: Obj) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


def managers(obj: Obj) -> dict[str, str]:
    return {m["manager"]: m["operation"] for m in obj["metadata"]["managedFields"]}


def test_omitted_fields_are_removed(cluster: Cluster) -> None:
    obj = configmap("a", {"keep": "1", "drop": "2"}, labels={"app": "a", "old": "x"})
    cluster.apply(obj, field_manager="git")
    slim = configmap("a", {"keep": "1"}, labels={"app": "a"})
    live = cluster.apply(slim, field_manager="git")
    assert live["data"] == {"keep": "1"}
    assert live["metadata"]["labels"] == {"app": "a"}


def test_omitted_fields_owned_by_another_manager_stay(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"shared": "1", "mine": "2"}), field_manager="git")
    cluster.apply(configmap("a", {"shared": "1"}), field_manager="ops")
    live = cluster.apply(configmap("a", {}), field_manager="git")
    assert live["data"] == {"shared": "1"}
    owned = {m["manager"]: m["fieldsV1"]["f:data"] for m in live["metadata"]["managedFields"]}
    assert owned == {"ops": {"f:shared": {}}, "git": {}}  # git still applies `data: {}`


def test_other_managers_fields_are_kept(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"x": "1"}), field_manager="git")
    cluster.apply(configmap("a", {"y": "2"}), field_manager="ops")
    live = cluster.apply(configmap("a", {"x": "3"}), field_manager="git")
    assert live["data"] == {"x": "3", "y": "2"}
    assert managers(live) == {"git": "Apply", "ops": "Apply"}


def test_conflict_lists_path_and_manager(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    with pytest.raises(FieldConflict) as caught:
        cluster.apply(deployment("web", replicas=5, image="web:2"), field_manager="hpa")
    assert sorted(caught.value.conflicts) == [
        ('.spec.replicas', "git"),
        ('.spec.template.spec.containers[name="main"].image', "git"),
    ]
    assert cluster.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2


def test_same_value_is_shared_not_a_conflict(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    live = cluster.apply(deployment("web", replicas=2), field_manager="other")
    assert managers(live) == {"git": "Apply", "other": "Apply"}


def test_force_moves_ownership(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    scale = {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "web"}, "spec": {"replicas": 5}}
    live = cluster.apply(scale, field_manager="hpa", force=True)
    assert live["spec"]["replicas"] == 5
    # git no longer owns replicas: omitting it now leaves hpa's value alone ...
    without = deployment("web")
    del without["spec"]["replicas"]
    live = cluster.apply(without, field_manager="git")
    assert live["spec"]["replicas"] == 5
    # ... and setting it again is a conflict with hpa.
    with pytest.raises(FieldConflict) as caught:
        cluster.apply(deployment("web", replicas=2), field_manager="git")
    assert caught.value.conflicts == [(".spec.replicas", "hpa")]


def test_containers_merge_by_name(cluster: Cluster) -> None:
    obj = deployment("web")
    containers(obj).append({"name": "sidecar", "image": "proxy:1"})
    cluster.apply(obj, field_manager="git")
    injector = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": [
                    {"name": "main", "env": [{"name": "INJECTED", "value": "1"}]}]}}}}
    cluster.apply(injector, field_manager="injector")
    slim = deployment("web", image="web:2")  # git drops the sidecar, bumps the image
    live = cluster.apply(slim, field_manager="git")
    assert containers(live) == [
        {"name": "main", "image": "web:2", "env": [{"name": "INJECTED", "value": "1"}]}
    ]


def test_container_ports_key_on_port_and_protocol(cluster: Cluster) -> None:
    obj = deployment("web")
    containers(obj)[0]["ports"] = [{"containerPort": 80, "name": "http"},
                                   {"containerPort": 53, "protocol": "UDP"}]
    cluster.apply(obj, field_manager="git")
    other = copy.deepcopy(obj)
    containers(other)[0]["ports"] = [{"containerPort": 9090, "name": "metrics"}]
    del other["spec"]["replicas"]
    live = cluster.apply(other, field_manager="metrics")
    ports = containers(live)[0]["ports"]
    assert [p["containerPort"] for p in ports] == [80, 53, 9090]


def test_other_lists_are_atomic(cluster: Cluster) -> None:
    obj = deployment("web")
    containers(obj)[0]["args"] = ["--a", "--b"]
    cluster.apply(obj, field_manager="git")
    changed = copy.deepcopy(obj)
    containers(changed)[0]["args"] = ["--c"]
    with pytest.raises(FieldConflict) as caught:
        cluster.apply(changed, field_manager="other")
    assert caught.value.conflicts == [('.spec.template.spec.containers[name="main"].args', "git")]
    live = cluster.apply(changed, field_manager="git")
    assert containers(live)[0]["args"] == ["--c"]


def test_finalizers_are_a_set(cluster: Cluster) -> None:
    cluster.apply(configmap("a", finalizers=["a.example/x"]), field_manager="one")
    live = cluster.apply(configmap("a", finalizers=["b.example/y"]), field_manager="two")
    assert live["metadata"]["finalizers"] == ["a.example/x", "b.example/y"]
    live = cluster.apply(configmap("a"), field_manager="one")
    assert live["metadata"]["finalizers"] == ["b.example/y"]


def test_associative_item_without_key_is_invalid(cluster: Cluster) -> None:
    obj = deployment("web")
    containers(obj).append({"image": "nameless:1"})
    with pytest.raises(Invalid, match=r"containers\[1\]"):
        cluster.apply(obj, field_manager="git")


def test_dry_run_validates_and_stores_nothing(cluster: Cluster) -> None:
    preview = cluster.apply(deployment("web"), field_manager="git", dry_run=True)
    assert preview["spec"]["replicas"] == 1
    with pytest.raises(NotFound):
        cluster.get("apps/v1", "Deployment", "web")
    live = cluster.apply(deployment("web"), field_manager="git")
    preview = cluster.apply(deployment("web", replicas=4), field_manager="git", dry_run=True)
    assert preview["spec"]["replicas"] == 4
    assert cluster.get("apps/v1", "Deployment", "web") == live
    with pytest.raises(FieldConflict):
        cluster.apply(deployment("web", replicas=4), field_manager="other", dry_run=True)


def test_managed_fields_shape(cluster: Cluster) -> None:
    live = cluster.apply(deployment("web"), field_manager="git")
    (entry,) = live["metadata"]["managedFields"]
    assert entry["manager"] == "git"
    assert entry["operation"] == "Apply"
    assert entry["apiVersion"] == "apps/v1"
    assert entry["fieldsType"] == "FieldsV1"
    spec = entry["fieldsV1"]["f:spec"]
    assert spec["f:replicas"] == {}
    main = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']
    assert main == {".": {}, "f:image": {}, "f:name": {}}  # the key is owned too, as on Kubernetes


def test_withdrawing_a_whole_map_removes_it(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"k": "v"}, labels={"app": "a"}), field_manager="git")
    bare: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    live = cluster.apply(bare, field_manager="git")
    assert "data" not in live
    assert "labels" not in live["metadata"]
    assert "data" not in cluster.get("v1", "ConfigMap", "a")
