"""Discovery: built-in kinds and kinds that CustomResourceDefinitions add."""

from __future__ import annotations

import re
from typing import Any

import pytest

from headway.cluster.errors import Invalid, UnknownKind
from headway.cluster.protocol import Cluster, ResourceKind
from headway.model.obj import Obj


def crd(*, scope: str = "Namespaced", served_v2: bool = True) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True},
                {"name": "v2", "served": served_v2, "storage": False},
            ],
        },
    }


@pytest.mark.parametrize(
    ("api_version", "kind", "namespaced"),
    [
        ("v1", "Namespace", False),
        ("v1", "Pod", True),
        ("v1", "Event", True),
        ("apps/v1", "Deployment", True),
        ("batch/v1", "CronJob", True),
        ("autoscaling/v2", "HorizontalPodAutoscaler", True),
        ("policy/v1", "PodDisruptionBudget", True),
        ("networking.k8s.io/v1", "Ingress", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", False),
        ("coordination.k8s.io/v1", "Lease", True),
        ("argoproj.io/v1alpha1", "Rollout", True),
        ("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", False),
        ("argoproj.io/v1alpha1", "AppProject", True),
        ("networking.istio.io/v1beta1", "Gateway", True),
        ("networking.istio.io/v1", "Gateway", True),
        ("networking.istio.io/v1alpha3", "ServiceEntry", True),
    ],
)
def test_builtin_kinds(cluster: Cluster, api_version: str, kind: str, namespaced: bool) -> None:
    found = [k for k in cluster.discovery() if (k.api_version, k.kind) == (api_version, kind)]
    assert len(found) == 1
    assert found[0].namespaced is namespaced


def test_crd_adds_its_served_versions(cluster: Cluster) -> None:
    before = {(k.api_version, k.kind) for k in cluster.discovery()}
    assert ("example.com/v1", "Widget") not in before
    cluster.apply(crd(served_v2=False), field_manager="test")
    widgets = [k for k in cluster.discovery() if k.kind == "Widget"]
    assert widgets == [ResourceKind("example.com/v1", "Widget", "widgets", True)]
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w"}, "spec": {"size": 3}}
    cluster.apply(widget, field_manager="test")
    assert cluster.get("example.com/v1", "Widget", "w")["spec"] == {"size": 3}
    with pytest.raises(UnknownKind):
        cluster.get("example.com/v2", "Widget", "w")
    cluster.apply(crd(served_v2=True), field_manager="test")
    assert cluster.get("example.com/v2", "Widget", "w")["apiVersion"] == "example.com/v2"


def test_cluster_scoped_crd(cluster: Cluster) -> None:
    cluster.apply(crd(scope="Cluster"), field_manager="test")
    (kind,) = [k for k in cluster.discovery() if k.api_version == "example.com/v1"]
    assert not kind.namespaced
    made = cluster.apply({"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "w"}}, field_manager="test")
    assert "namespace" not in made["metadata"]


def test_deleting_the_crd_removes_the_kind(cluster: Cluster) -> None:
    cluster.apply(crd(), field_manager="test")
    cluster.apply({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "w"}}, field_manager="test")
    cluster.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
    with pytest.raises(UnknownKind):
        cluster.list("example.com/v1", "Widget")
    cluster.apply(crd(), field_manager="test")
    assert cluster.list("example.com/v1", "Widget") == []  # its objects went with it


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["spec"].pop("group"), "spec.group: required"),
        (lambda c: c["spec"]["names"].pop("plural"), "spec.names.plural: required"),
        (lambda c: c["spec"].update(scope="Global"), "spec.scope: must be Namespaced or Cluster"),
        (lambda c: c["metadata"].update(name="widgets"), "must be 'widgets.example.com'"),
        (lambda c: c["spec"].update(versions=[]), "spec.versions: at least one"),
    ],
)
def test_malformed_crds_are_invalid(cluster: Cluster, change: Any, message: str) -> None:
    bad = crd()
    change(bad)
    with pytest.raises(Invalid, match=re.escape(message)):
        cluster.apply(bad, field_manager="test")
