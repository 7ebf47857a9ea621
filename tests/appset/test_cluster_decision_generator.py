"""The clusterDecisionResource generator, in the ApplicationSet controller over the local
store: a duck-typed PlacementDecision's `status.decisions` mapped to Argo CD cluster
Secrets; a decision naming no registered cluster is skipped; a ConfigMap or resource that
cannot give decisions is a condition and changes no Application."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e_sync.e2e_helpers import API, default_project
from headway.appset.cluster_decisions import decision_params
from headway.appset.inputs import ClusterSecret
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

KEY = ObjectKey("argocd", "placed")
DUCK_API = "cluster.open-cluster-management.io/v1beta1"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _cluster_secret(name: str, server: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": f"cluster-{name}",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "cluster"},
        },
        "data": {"name": _b64(name), "server": _b64(server), "config": _b64("{}")},
    }


PLACEMENT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "placementdecisions.cluster.open-cluster-management.io"},
    "spec": {
        "group": "cluster.open-cluster-management.io",
        "scope": "Namespaced",
        "names": {"kind": "PlacementDecision", "plural": "placementdecisions"},
        "versions": [{"name": "v1beta1", "served": True, "storage": True}],
    },
}


def _decision(decisions: Any) -> dict[str, Any]:
    return {
        "apiVersion": DUCK_API,
        "kind": "PlacementDecision",
        "metadata": {"name": "web-placement", "namespace": "argocd", "labels": {"app": "web"}},
        "status": {"decisions": decisions},
    }


def _config_map(**data: str) -> dict[str, Any]:
    values = {
        "apiVersion": DUCK_API,
        "kind": "PlacementDecision",
        "statusListKey": "decisions",
        "matchKey": "clusterName",
        **data,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ocm-placement", "namespace": "argocd"},
        "data": values,
    }


def _appset(**generator: Any) -> dict[str, Any]:
    spec = {"configMapRef": "ocm-placement", "labelSelector": {"matchLabels": {"app": "web"}}}
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "placed", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "generators": [{"clusterDecisionResource": {**spec, **generator}}],
            "template": {
                "metadata": {"name": "web-{{.name}}"},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://example.com/web.git", "path": "{{.reason}}"},
                    "destination": {"server": "{{.server}}", "namespace": "web"},
                },
            },
        },
    }


class World:
    def __init__(self, tmp_path: Path, store: LocalCluster) -> None:
        self.store = store
        self.controller = ApplicationSetController(
            cluster=store,
            clock=VirtualClock(),
            git=GitCache(tmp_path / "git-cache"),
            namespace="argocd",
            poll_seconds=600.0,
        )
        for manifest in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            PLACEMENT_CRD,
            default_project(),
            _cluster_secret("east", "https://east.example.com"),
            _cluster_secret("west", "https://west.example.com"),
            _config_map(),
        ):
            store.apply(manifest, field_manager="t")

    def place(self, decisions: Any) -> None:
        """The PlacementDecision with `decisions` as its status (written as a controller would)."""
        manifest = _decision(decisions)
        self.store.apply({k: v for k, v in manifest.items() if k != "status"}, field_manager="t")
        self.store.patch_status(
            DUCK_API, "PlacementDecision", "web-placement", "argocd", manifest["status"]
        )

    def apply(self, manifest: dict[str, Any]) -> float | None:
        self.store.apply(manifest, field_manager="t", force=True)
        return self.controller.step(KEY)

    def apps(self) -> dict[str, dict[str, Any]]:
        found = self.store.list(API, "Application", namespace="argocd")
        return {
            a["metadata"]["name"]: a for a in found if not a["metadata"].get("deletionTimestamp")
        }

    def error(self) -> dict[str, Any]:
        status = self.store.get(API, "ApplicationSet", "placed", "argocd").get("status") or {}
        return {c["type"]: c for c in status.get("conditions") or []}["ErrorOccurred"]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        yield World(tmp_path, store)


DECISIONS = [
    {"clusterName": "east", "reason": "fit"},
    {"clusterName": "moon", "reason": "unknown cluster"},
    {"clusterName": "west", "reason": "spread"},
]


def test_decisions_become_applications_on_registered_clusters(world: World) -> None:
    world.place(DECISIONS)
    requeue = world.apply(_appset())
    apps = world.apps()
    assert sorted(apps) == ["web-east", "web-west"]
    assert apps["web-west"]["spec"]["destination"]["server"] == "https://west.example.com"
    assert apps["web-west"]["spec"]["source"]["path"] == "spread"
    assert requeue == 180.0  # Argo CD's default for this generator
    world.place(DECISIONS[:1])
    world.controller.step(KEY)
    assert sorted(world.apps()) == ["web-east"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"config": _config_map(matchKey="")}, "data.matchKey is missing"),
        ({"config": _config_map(apiVersion="v1beta1")}, "needs data.apiVersion (group/version)"),
        ({"decision": "east"}, "status.decisions is not a list of mappings"),
        ({"appset": {"name": "other"}}, "set exactly one of name and labelSelector"),
        ({"appset": {"labelSelector": {"matchLabels": {"app": "db"}}}}, "no PlacementDecision"),
    ],
)
def test_what_cannot_give_decisions_is_a_condition_and_changes_nothing(
    world: World, change: dict[str, Any], expected: str
) -> None:
    world.place(DECISIONS)
    world.apply(_appset())
    before = {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()}
    if "config" in change:
        world.store.apply(change["config"], field_manager="t", force=True)
    if "decision" in change:
        world.place(change["decision"])
    world.apply(_appset(**change.get("appset", {})))
    after = {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()}
    assert after == before
    assert world.error()["message"].startswith("clusterDecisionResource: ")
    assert expected in world.error()["message"]


def test_without_go_template_decision_fields_are_strings() -> None:
    found = decision_params(
        config={"matchKey": "cluster"},
        resources=[{"status": {"clusters": [{"cluster": "in-cluster", "weight": 3}]}}],
        clusters=[ClusterSecret("east", "https://east")],
        go_template=False,
    )
    assert found == [
        {
            "name": "in-cluster",
            "server": "https://kubernetes.default.svc",
            "cluster": "in-cluster",
            "weight": "3",
        }
    ]


def test_the_config_map_may_name_the_resource_as_argo_cds_example_does(world: World) -> None:
    """argo-cd's applicationset/examples/clusterDecisionResource/configMap.yaml writes
    `kind: placementdecisions`: Argo CD reads it as the resource. It is the CRD's plural, so
    the PlacementDecisions are read (before: 'no placementdecisions resource is chosen')."""
    world.store.apply(_config_map(kind="placementdecisions"), field_manager="t", force=True)
    world.place(DECISIONS)
    world.apply(_appset())
    assert sorted(world.apps()) == ["web-east", "web-west"]
