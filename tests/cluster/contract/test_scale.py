"""The scale subresource: `get_scale` and `update_scale` (as `kubectl scale` and the HPA).

Status is asserted only on kinds no controller writes (a Rollout without Argo Rollouts, a
custom kind), so the suite holds on a real cluster with its controllers running; there the
backend installs Argo's Rollout CRD first."""

from __future__ import annotations

import pytest

from cluster.contract.objects import configmap, deployment
from cluster.contract.test_discovery import crd
from headway.cluster.errors import Conflict, FieldConflict, Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def _workload(kind: str, name: str, replicas: int) -> Obj:
    obj = deployment(name, replicas=replicas)
    obj["kind"] = kind
    if kind == "StatefulSet":
        obj["spec"]["serviceName"] = name
    return obj


def _rollout(name: str, replicas: int) -> Obj:
    obj = deployment(name, replicas=replicas)
    obj["apiVersion"], obj["kind"] = "argoproj.io/v1alpha1", "Rollout"
    obj["spec"]["strategy"] = {"canary": {"steps": [{"setWeight": 20}]}}
    return obj


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_a_workloads_scale_reads_and_writes_spec_replicas(cluster: Cluster, kind: str) -> None:
    live = cluster.apply(_workload(kind, "web", 2), field_manager="git")
    scale = cluster.get_scale("apps/v1", kind, "web")
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["metadata"]["name"] == "web"
    assert scale["metadata"]["uid"] == live["metadata"]["uid"]
    assert scale["spec"] == {"replicas": 2}
    # status.replicas is the workload controller's to move (on a real cluster it runs)
    assert isinstance(scale["status"]["replicas"], int)
    assert scale["status"]["selector"] == "app=web"
    scaled = cluster.update_scale("apps/v1", kind, "web", replicas=5, field_manager="hpa")
    assert scaled["spec"]["replicas"] == 5
    after = cluster.get("apps/v1", kind, "web")
    assert after["spec"]["replicas"] == 5


def test_a_rollouts_scale_shows_hpa_replicas_and_its_status_selector(cluster: Cluster) -> None:
    cluster.apply(_rollout("web", 3), field_manager="git")
    status = {"replicas": 4, "HPAReplicas": 3, "selector": "app=web"}
    cluster.patch_status("argoproj.io/v1alpha1", "Rollout", "web", None, status)
    scale = cluster.get_scale("argoproj.io/v1alpha1", "Rollout", "web")
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 3, "selector": "app=web"}
    cluster.update_scale("argoproj.io/v1alpha1", "Rollout", "web", replicas=6,
                         field_manager="hpa")
    assert cluster.get("argoproj.io/v1alpha1", "Rollout", "web")["spec"]["replicas"] == 6


def test_scaling_takes_the_replicas_field_from_the_applier(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    cluster.update_scale("apps/v1", "Deployment", "web", replicas=4, field_manager="hpa")
    with pytest.raises(FieldConflict) as raised:
        cluster.apply(deployment("web", replicas=2), field_manager="git")
    assert (".spec.replicas", "hpa") in raised.value.conflicts


def test_a_kind_without_a_scale_and_a_missing_object_are_not_found(cluster: Cluster) -> None:
    cluster.apply(configmap("a"), field_manager="git")
    with pytest.raises(NotFound):
        cluster.get_scale("v1", "ConfigMap", "a")
    with pytest.raises(NotFound):
        cluster.get_scale("apps/v1", "Deployment", "absent")
    with pytest.raises(NotFound):
        cluster.update_scale("apps/v1", "Deployment", "absent", replicas=1, field_manager="hpa")


@pytest.mark.parametrize("replicas", [-1, True, "3"])
def test_replicas_must_be_a_non_negative_integer(cluster: Cluster, replicas: object) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    with pytest.raises(Invalid, match="replicas"):
        cluster.update_scale("apps/v1", "Deployment", "web", replicas=replicas,  # type: ignore[arg-type]
                             field_manager="hpa")
    assert cluster.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2


def _scalable_crd() -> Obj:
    definition = crd()
    definition["spec"]["versions"][0]["subresources"] = {"scale": {
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.ready",
        "labelSelectorPath": ".status.selector",
    }}
    return definition


def test_a_custom_kind_scales_by_the_paths_its_crd_declares(cluster: Cluster) -> None:
    cluster.apply(_scalable_crd(), field_manager="git")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 2}}
    cluster.apply(widget, field_manager="git")
    cluster.patch_status("example.com/v1", "Widget", "w", None,
                         {"ready": 1, "selector": "app=w"})
    scale = cluster.get_scale("example.com/v1", "Widget", "w")
    assert (scale["spec"], scale["status"]) == ({"replicas": 2}, {"replicas": 1,
                                                                  "selector": "app=w"})
    cluster.update_scale("example.com/v1", "Widget", "w", replicas=4, field_manager="hpa")
    assert cluster.get("example.com/v1", "Widget", "w")["spec"] == {"size": 4}
    with pytest.raises(NotFound):  # v2 declares no scale subresource
        cluster.get_scale("example.com/v2", "Widget", "w")


def test_a_workload_without_replicas_scales_from_the_default_one(cluster: Cluster) -> None:
    obj = deployment("web")
    del obj["spec"]["replicas"]
    cluster.apply(obj, field_manager="git")  # a real API server writes the default, 1
    assert cluster.get_scale("apps/v1", "Deployment", "web")["spec"] == {"replicas": 1}


def test_a_stale_scale_version_is_a_conflict(cluster: Cluster) -> None:
    # A custom kind: no controller writes it between the reads and writes on a real cluster.
    cluster.apply(_scalable_crd(), field_manager="git")
    cluster.apply({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 2}},
                  field_manager="git")
    seen = cluster.get_scale("example.com/v1", "Widget", "w")["metadata"]["resourceVersion"]
    cluster.update_scale("example.com/v1", "Widget", "w", replicas=3, field_manager="one",
                         resource_version=seen)
    with pytest.raises(Conflict):
        cluster.update_scale("example.com/v1", "Widget", "w", replicas=9, field_manager="two",
                             resource_version=seen)
    assert cluster.get("example.com/v1", "Widget", "w")["spec"]["size"] == 3


def test_a_dry_run_scale_stores_nothing(cluster: Cluster) -> None:
    cluster.apply(deployment("web", replicas=2), field_manager="git")
    preview = cluster.update_scale("apps/v1", "Deployment", "web", replicas=7,
                                   field_manager="hpa", dry_run=True)
    assert preview["spec"] == {"replicas": 7}
    assert cluster.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2
