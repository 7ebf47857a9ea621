"""The plugin generator in the ApplicationSet controller, against a real local plugin
service: the ConfigMap's baseUrl and token (from a Secret), Argo CD's request and answer
shapes, parameters with goTemplate and flattened without it, requeueAfterSeconds; every
failure is a condition naming the generator and changes no Application."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from forge_servers import PluginService, plugin_service

from e2e_sync.e2e_helpers import API, default_project
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

KEY = ObjectKey("argocd", "tenants")
TOKEN = "plugin-token-0123456789abcdef"
TENANTS = [
    {"tenant": "blue", "quota": {"cpu": 2}},
    {"tenant": "green", "quota": {"cpu": 4}},
]


def _appset(*, go_template: bool = True) -> dict[str, Any]:
    if go_template:
        name, namespace = (
            "t-{{.tenant}}",
            "{{.tenant}}-{{.quota.cpu}}-{{.generator.input.parameters.env}}",
        )
    else:
        name, namespace = (
            "t-{{tenant}}",
            "{{tenant}}-{{quota.cpu}}-{{generator.input.parameters.env}}",
        )
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "tenants", "namespace": "argocd"},
        "spec": {
            "goTemplate": go_template,
            "generators": [
                {
                    "plugin": {
                        "configMapRef": {"name": "tenants-plugin"},
                        "input": {"parameters": {"env": "prod", "regions": ["eu", "us"]}},
                        "requeueAfterSeconds": 30,
                    }
                }
            ],
            "template": {
                "metadata": {"name": name},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://example.com/t.git", "path": "."},
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": namespace,
                    },
                },
            },
        },
    }


class World:
    def __init__(self, tmp_path: Path, store: LocalCluster, service: PluginService) -> None:
        self.store, self.service = store, service
        self.http = httpx2.Client()
        self.controller = ApplicationSetController(
            cluster=store,
            clock=VirtualClock(),
            git=GitCache(tmp_path / "git-cache"),
            namespace="argocd",
            poll_seconds=180.0,
            http=self.http,
        )
        for manifest in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            default_project(),
            _secret(),
            self.config_map(),
        ):
            store.apply(manifest, field_manager="t")

    def config_map(self, **data: str) -> dict[str, Any]:
        values = {"baseUrl": self.service.url, "token": "$tenants-plugin:token", **data}
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "tenants-plugin", "namespace": "argocd"},
            "data": values,
        }

    def apply(self, manifest: dict[str, Any]) -> float | None:
        self.store.apply(manifest, field_manager="t", force=True)
        return self.controller.step(KEY)

    def apps(self) -> dict[str, dict[str, Any]]:
        found = self.store.list(API, "Application", namespace="argocd")
        return {
            a["metadata"]["name"]: a for a in found if not a["metadata"].get("deletionTimestamp")
        }

    def versions(self) -> dict[str, str]:
        return {n: a["metadata"]["resourceVersion"] for n, a in self.apps().items()}

    def error(self) -> dict[str, Any]:
        status = self.store.get(API, "ApplicationSet", "tenants", "argocd").get("status") or {}
        return {c["type"]: c for c in status.get("conditions") or []}["ErrorOccurred"]


def _secret(
    name: str = "tenants-plugin", *, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "labels": {"app.kubernetes.io/part-of": "argocd"} if labels is None else labels,
        },
        "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
    }


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with (
        plugin_service(PluginService(parameters=[dict(t) for t in TENANTS])) as service,
        LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store,
    ):
        world = World(tmp_path, store, service)
        yield world
        world.http.close()


@pytest.mark.parametrize("go_template", [True, False])
def test_one_application_per_output_parameter_set(world: World, go_template: bool) -> None:
    requeue = world.apply(_appset(go_template=go_template))
    apps = world.apps()
    assert sorted(apps) == ["t-blue", "t-green"]
    assert apps["t-green"]["spec"]["destination"]["namespace"] == "green-4-prod"
    assert requeue == 30.0
    seen, body = world.service.requests[0]
    assert seen.path == "/api/v1/getparams.execute"
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert body == {
        "applicationSetName": "tenants",
        "input": {"parameters": {"env": "prod", "regions": ["eu", "us"]}},
    }


def _break(world: World, how: str) -> None:
    service = world.service
    if how == "refused":
        service.refuse = (401, f"bad token {TOKEN}")  # a service that echoes what it got
    elif how == "not JSON":
        service.raw_answer = b"<html>oops</html>"
    elif how == "no output":
        service.raw_answer = json.dumps({"parameters": []}).encode()
    elif how == "not mappings":
        service.raw_answer = json.dumps({"output": {"parameters": ["blue"]}}).encode()
    elif how == "no token key":
        world.store.apply(world.config_map(token="$tenants-plugin:other"), field_manager="t")
    elif how == "token not a reference":
        world.store.apply(world.config_map(token=TOKEN), field_manager="t")
    elif how == "no baseUrl":
        world.store.apply(world.config_map(baseUrl=""), field_manager="t")


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("refused", "HTTP 401: bad token ***"),
        ("not JSON", "the answer is not JSON"),
        ("no output", "the answer has no output.parameters list"),
        ("not mappings", "output.parameters[0] is not a mapping"),
        ("no token key", "Secret argocd/tenants-plugin has no key 'other'"),
        ("token not a reference", "data.token must reference a Secret key"),
        ("no baseUrl", "data.baseUrl is missing"),
    ],
)
def test_a_failing_plugin_is_a_condition_and_changes_no_application(
    world: World, how: str, expected: str
) -> None:
    world.apply(_appset())
    before = world.versions()
    _break(world, how)
    world.controller.step(KEY)
    assert world.versions() == before
    message = world.error()["message"]
    assert message.startswith("plugin generator")
    assert expected in message
    assert TOKEN not in message
    events = world.store.list("v1", "Event", namespace="argocd")
    assert TOKEN not in json.dumps(events)


def test_a_plugin_slower_than_its_request_timeout_is_a_condition(world: World) -> None:
    world.apply(_appset())
    before = world.versions()
    world.store.apply(world.config_map(requestTimeout="1"), field_manager="t")
    world.service.hold = threading.Event()
    world.controller.step(KEY)
    world.service.hold.set()
    assert world.versions() == before
    assert "ReadTimeout" in world.error()["message"]


def test_an_empty_answer_follows_the_empty_generation_rule(world: World) -> None:
    world.apply(_appset())
    world.service.parameters = []
    world.controller.step(KEY)
    assert sorted(world.apps()) == ["t-blue", "t-green"]
    assert world.error()["reason"] == "EmptyGenerationRefused"


@pytest.mark.parametrize(
    "labels", [{}, {"app.kubernetes.io/part-of": "payments"}, {"app.kubernetes.io/name": "argocd"}]
)
def test_a_secret_not_labelled_part_of_argocd_is_refused_before_its_value_is_read(
    world: World, labels: dict[str, str]
) -> None:
    world.apply(_appset())
    before, calls = world.versions(), len(world.service.requests)
    world.store.apply(_secret(labels=labels), field_manager="t", force=True)
    world.controller.step(KEY)
    assert world.versions() == before
    assert len(world.service.requests) == calls  # no token was sent anywhere
    message = world.error()["message"]
    assert message.startswith("plugin generator (ConfigMap argocd/tenants-plugin): data.token:")
    assert "Secret tenants-plugin is not labelled app.kubernetes.io/part-of: argocd" in message
    assert TOKEN not in message
    assert TOKEN not in json.dumps(world.store.list("v1", "Event", namespace="argocd"))


def test_argocd_secret_keys_need_no_label(world: World) -> None:
    world.store.apply(_secret("argocd-secret", labels={}), field_manager="t")
    world.store.apply(world.config_map(token="$token"), field_manager="t")
    world.apply(_appset())
    assert sorted(world.apps()) == ["t-blue", "t-green"]
    assert world.service.requests[0][0].headers["authorization"] == f"Bearer {TOKEN}"
