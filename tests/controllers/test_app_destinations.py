"""An Application targets a cluster registered by a cluster Secret, by name or by server,
and its project's destination rules (and the Secret's namespaces) hold for every write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    make_harness,
    manifests,
)
from test_cluster_registry import TOKEN, cluster_secret

from headway.clock import VirtualClock
from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry

REMOTE = "https://remote.example.com:6443"


def _harness(
    tmp_path: Path, clock: VirtualClock, **secret_data: str
) -> tuple[Harness, LocalCluster]:
    h = make_harness(tmp_path, clock, {"app/cm.yaml": manifests(config_map("settings"))})
    (tmp_path / "remote").mkdir()
    remote = LocalCluster(tmp_path / "remote" / "cluster.db", clock)
    remote.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
                 field_manager="test")
    h.store.apply(cluster_secret("remote", REMOTE, **secret_data), field_manager="admin")

    def connect(secret: ClusterSecret) -> Cluster:
        assert secret.server == REMOTE and secret.credentials.bearer_token == TOKEN
        return remote

    h.controller = ApplicationController(
        store=h.store, clusters=ClusterRegistry(h.store, connect=connect, clock=clock),
        sources=h.reader, clock=clock,
    )
    return h, remote


def _app(h: Harness, destination: dict[str, str]) -> dict[str, Any]:
    app = application("web", h.remote.url, path="app", automated={})
    app["spec"]["destination"] = destination
    return app


def _conditions(h: Harness) -> list[str]:
    return [str(c["message"]) for c in h.status("web").get("conditions") or []]


@pytest.mark.parametrize("destination", [
    {"name": "remote", "namespace": "demo"},
    {"server": REMOTE + "/", "namespace": "demo"},
])
def test_an_app_syncs_into_the_cluster_its_destination_names(
    tmp_path: Path, clock: VirtualClock, destination: dict[str, str]
) -> None:
    h, remote = _harness(tmp_path, clock)
    h.install(_app(h, destination))
    status = h.run("web", lambda s: (s.get("sync") or {}).get("status") == "Synced")
    assert remote.get("v1", "ConfigMap", "settings", "demo")["data"] == {"k": "settings"}
    assert not h.exists("ConfigMap", "settings", "demo")  # nothing lands in-cluster
    assert TOKEN not in yaml.safe_dump(h.app("web")) and TOKEN not in json.dumps(status)


def test_a_project_that_denies_the_destination_refuses_it_and_writes_nothing(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, remote = _harness(tmp_path, clock)
    project = h.store.get(APP_API_VERSION, "AppProject", "default", APPS_NS)
    project["spec"]["destinations"] = [
        {"name": "!remote", "namespace": "*"},
        {"server": "*", "namespace": "*"},
    ]
    h.store.apply(project, field_manager="admin")
    h.install(_app(h, {"name": "remote", "namespace": "demo"}))
    for _ in range(4):
        h.step("web")
    (condition,) = _conditions(h)
    assert condition == (
        "project 'default': destination (server https://remote.example.com:6443, "
        "name remote, namespace demo) is denied by a ! destination"
    )
    assert remote.list("v1", "ConfigMap", namespace="demo") == []


def test_an_unknown_destination_name_is_an_invalid_spec_condition(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, _ = _harness(tmp_path, clock)
    h.install(_app(h, {"name": "staging", "namespace": "demo"}))
    h.step("web")
    app = h.app("web")
    (condition,) = app["status"]["conditions"]
    assert condition["type"] == "InvalidSpecError"
    assert condition["message"].startswith("there is no cluster with name 'staging'; known "
                                           "clusters: in-cluster (https://kubernetes.default.svc)"
                                           ", remote (https://remote.example.com:6443)")


def test_a_namespace_scoped_cluster_refuses_other_namespaces_and_cluster_scoped_kinds(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, remote = _harness(tmp_path, clock, namespaces="shop")
    h.install(_app(h, {"name": "remote", "namespace": "demo"}))
    h.step("web")
    (condition,) = _conditions(h)
    assert condition == (
        "cluster remote (https://remote.example.com:6443) is limited to namespaces shop by "
        "its cluster Secret: namespace demo is not one of them"
    )
    assert remote.list("v1", "ConfigMap", namespace="demo") == []
