"""Situations users hit when they bring the public Argo example repositories (issue 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import APPS_NS, Harness, application, make_harness, manifests, message, phase

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.controller import RolloutController
from headway.health import HealthStatus, assess


def _done(s: dict[str, Any]) -> bool:
    return phase(s) in ("Succeeded", "Failed")


def _cluster_template(name: str) -> dict[str, Any]:
    metric = {
        "name": "ok",
        "successCondition": "result == 1",
        "provider": {"web": {"url": "http://127.0.0.1:1/ok", "jsonPath": "{$.ok}"}},
    }
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ClusterAnalysisTemplate",
        "metadata": {"name": name},
        "spec": {"metrics": [metric]},
    }


@pytest.mark.parametrize("options", [(), ("CreateNamespace=true",)])
def test_a_cluster_scoped_template_syncs_with_and_without_create_namespace(
    tmp_path: Path, clock: VirtualClock, options: tuple[str, ...]
) -> None:
    """A namespaced app that carries a ClusterAnalysisTemplate: the template has no namespace
    whether or not the app asks for its namespace to be created (it used to wait forever for
    `ClusterAnalysisTemplate/<ns>/error-rate`, which cannot exist)."""
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(_cluster_template("error-rate"))})
    namespace = "brand-new" if options else "demo"
    h.install(
        application(
            "shop", h.remote.url, path="app", namespace=namespace, automated={}, options=options
        )
    )
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    h.store.get("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", "error-rate", None)
    results = status["operationState"]["syncResult"]["resources"]
    template = [r for r in results if r["kind"] == "ClusterAnalysisTemplate"]
    assert [r["namespace"] for r in template] == [""]


def _canary(image: str) -> dict[str, Any]:
    labels = {"app": "web"}
    steps = [{"setWeight": 20}, {"pause": {}}]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
            "strategy": {"canary": {"steps": steps}},
        },
    }


def _rollouts_settle(store: LocalCluster, controller: RolloutController) -> None:
    """Play the Rollout controller and the kubelet (every ReplicaSet's pods available)
    until nothing changes."""
    for _ in range(40):
        before = store.revision()
        controller.step(ObjectKey("demo", "web"))
        for rs in store.list("apps/v1", "ReplicaSet", namespace="demo"):
            want = int(rs["spec"].get("replicas", 0))
            status = {
                "replicas": want,
                "readyReplicas": want,
                "availableReplicas": want,
                "observedGeneration": rs["metadata"].get("generation", 1),
            }
            if (rs.get("status") or {}) != status:
                name = rs["metadata"]["name"]
                store.patch_status("apps/v1", "ReplicaSet", name, "demo", status)
        if store.revision() == before:
            return
    raise AssertionError("the Rollout did not settle")


def _image(h: Harness) -> str:
    rollout = h.store.get("argoproj.io/v1alpha1", "Rollout", "web", "demo")
    return str(rollout["spec"]["template"]["spec"]["containers"][0]["image"])


def test_a_canary_paused_by_its_steps_does_not_hold_back_the_next_commit(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """An automated app whose Rollout waits at `pause: {}` for a person: the sync that
    started the canary is over once applied, and the next commit is applied (it used to
    wait forever on `Rollout/web Suspended (CanaryPauseStep)`)."""
    h = make_harness(tmp_path, clock, {"app/web.yaml": manifests(_canary("web:1"))})
    rollouts = RolloutController(h.store, clock)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", _done)
    _rollouts_settle(h.store, rollouts)

    second = h.remote.commit({"app/web.yaml": manifests(_canary("web:2"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: _done(s) and s["operationState"]["syncResult"]["revision"] == second)
    _rollouts_settle(h.store, rollouts)
    rollout = h.store.get("argoproj.io/v1alpha1", "Rollout", "web", "demo")
    assert rollout["status"]["pauseConditions"][0]["reason"] == "CanaryPauseStep"
    assert assess(rollout).status is HealthStatus.SUSPENDED

    third = h.remote.commit({"app/web.yaml": manifests(_canary("web:3"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: s["operationState"]["syncResult"]["revision"] == third)
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    assert _image(h) == "web:3"


def test_a_root_app_names_the_error_of_a_child_that_cannot_render(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """App of apps: the child in wave 0 points at a path the repository does not have. The
    root's wave 0 used to wait forever on `Application/payments Progressing`; now it fails
    naming the child's ComparisonError, and the root's health says the same."""
    child = application("payments", "", path="apps/payments", automated={})
    child["spec"]["source"]["repoURL"] = "REPO"
    child["metadata"]["annotations"] = {"argocd.argoproj.io/sync-wave": "0"}
    later = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "after", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
    }
    h = make_harness(tmp_path, clock, {"root/apps.yaml": "placeholder: true\n"})
    text = manifests(child, later).replace("REPO", h.remote.url)
    h.remote.commit({"root/apps.yaml": text})
    h.reader.mark_changed(h.remote.url)
    h.install(application("root", h.remote.url, path="root", namespace=APPS_NS, automated={}))
    h.run("root", lambda s: "wave 0" in message(s))
    h.run("payments", lambda s: any(c["type"] == "ComparisonError" for c in s["conditions"]))
    status = h.run("root", _done)
    assert phase(status) == "Failed"
    assert "wave 0 failed: Application/payments Degraded (ComparisonError: " in message(status)
    assert "apps/payments" in message(status)
    assert status["health"]["status"] == "Degraded"
    assert status["health"]["message"].startswith("Application/payments is Degraded: Comparison")
    assert not h.exists("ConfigMap", "after", APPS_NS)


def _gateway() -> dict[str, Any]:
    server = {"port": {"number": 80, "name": "http", "protocol": "HTTP"}, "hosts": ["*"]}
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "Gateway",
        "metadata": {"name": "web-gateway"},
        "spec": {"selector": {"istio": "ingressgateway"}, "servers": [server]},
    }


def _routes_through(gateway: str) -> dict[str, Any]:
    split = [{"destination": {"host": "web-stable"}, "weight": 100}]
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": "web"},
        "spec": {"hosts": ["*"], "gateways": [gateway], "http": [{"route": split}]},
    }


def test_a_repository_that_carries_its_istio_gateway_syncs(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """The Istio example layout: a Gateway and the VirtualService bound to it, next to the
    app. The local runtime used to refuse the Gateway ("does not serve Gateway"), failing the
    whole sync at the dry run."""
    entry = {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "ServiceEntry",
        "metadata": {"name": "payments-api"},
        "spec": {"hosts": ["api.payments.example"], "location": "MESH_EXTERNAL"},
    }
    files = {"app/mesh.yaml": manifests(_gateway(), _routes_through("web-gateway"), entry)}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    gateway = h.store.get("networking.istio.io/v1", "Gateway", "web-gateway", "demo")
    assert gateway["spec"]["servers"][0]["port"]["number"] == 80
    assert h.store.get("networking.istio.io/v1beta1", "ServiceEntry", "payments-api", "demo")
