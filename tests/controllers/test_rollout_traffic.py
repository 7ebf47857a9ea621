"""A traffic-routed canary through an Istio VirtualService: the exact edits, replica counts
with a router (setCanaryScale, dynamicStableScale, scale-down delays), header routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout, service

from headway.clock import VirtualClock
from headway.model.obj import Obj

VS_API = "networking.istio.io/v1beta1"
CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "virtualservices.networking.istio.io"},
    "spec": {
        "group": "networking.istio.io",
        "scope": "Namespaced",
        "names": {"kind": "VirtualService", "plural": "virtualservices"},
        "versions": [{"name": "v1beta1", "served": True, "storage": True}],
    },
}
VS: Obj = {
    "apiVersion": VS_API,
    "kind": "VirtualService",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "hosts": ["web"],
        "http": [
            {
                "name": "primary",
                "route": [
                    {"destination": {"host": "web-stable", "port": {"number": 80}}, "weight": 100},
                    {"destination": {"host": "web-canary", "port": {"number": 80}}, "weight": 0},
                ],
            }
        ],
    },
}


def canary(steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "stableService": "web-stable",
        "canaryService": "web-canary",
        "trafficRouting": {
            "istio": {"virtualService": {"name": "web", "routes": ["primary"]}},
            "managedRoutes": [{"name": "beta-users"}],
        },
        "steps": steps,
        **extra,
    }


def _setup(
    tmp_path: Path, clock: VirtualClock, steps: list[dict[str, Any]], **extra: Any
) -> Harness:
    h = Harness(tmp_path, clock)
    h.apply(CRD)
    h.apply(VS)
    h.apply(service("web-stable"))
    h.apply(service("web-canary"))
    h.apply(rollout(replicas=10, canary=canary(steps, **extra)))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=10, canary=canary(steps, **extra)))
    h.settle()
    return h


def _weights(h: Harness) -> list[tuple[str, int]]:
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    primary = next(r for r in vs["spec"]["http"] if r.get("name") == "primary")
    return [(d["destination"]["host"], d["weight"]) for d in primary["route"]]


def _selector(h: Harness, name: str) -> str:
    svc = h.cluster.get("v1", "Service", name, "default")
    return str(svc["spec"]["selector"].get("rollouts-pod-template-hash"))


def test_set_weight_edits_the_virtual_service(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, [{"setWeight": 20}, {"pause": {}}])
    status = h.status()
    stable, new = status["stableRS"], status["currentPodHash"]
    assert _weights(h) == [("web-stable", 80), ("web-canary", 20)]
    assert h.replica_sets() == {stable: 10, new: 2}
    assert _selector(h, "web-stable") == stable and _selector(h, "web-canary") == new
    weights = status["canary"]["weights"]
    assert weights["canary"] == {"weight": 20, "podTemplateHash": new, "serviceName": "web-canary"}
    assert weights["stable"]["weight"] == 80 and weights["verified"] is True
    assert status["phase"] == "Paused"


def test_promotion_sends_everything_to_new_stable_and_delays_scale_down(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _setup(tmp_path, clock, [{"setWeight": 20}, {"pause": {}}], scaleDownDelaySeconds=30)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    h.patch_status({"pauseConditions": None})
    wake = h.settle()
    assert h.status()["phase"] == "Healthy"
    assert _weights(h) == [("web-stable", 100), ("web-canary", 0)]
    assert _selector(h, "web-stable") == new
    assert h.replica_sets() == {stable: 10, new: 10}  # old stable kept for the delay
    assert wake is not None and wake <= 30
    clock.advance(30)
    h.settle()
    assert h.replica_sets() == {stable: 0, new: 10}


def test_abort_returns_traffic_and_keeps_canary_for_abort_delay(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _setup(tmp_path, clock, [{"setWeight": 40}, {"pause": {}}], abortScaleDownDelaySeconds=10)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    h.patch_status({"abort": True})  # `rollouts abort`
    h.settle()
    assert _weights(h) == [("web-stable", 100), ("web-canary", 0)]
    assert h.replica_sets() == {stable: 10, new: 4}
    assert h.status()["phase"] == "Degraded"
    assert h.status()["message"] == "RolloutAborted: Rollout aborted update to revision 2"
    clock.advance(10)
    h.settle()
    assert h.replica_sets() == {stable: 10, new: 0}


def test_set_canary_scale_and_header_route(tmp_path: Path, clock: VirtualClock) -> None:
    header = {
        "setHeaderRoute": {
            "name": "beta-users",
            "match": [{"headerName": "x-beta", "headerValue": {"exact": "yes"}}],
        }
    }
    steps = [{"setCanaryScale": {"replicas": 3}}, header, {"setWeight": 10}, {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    assert h.replica_sets() == {stable: 10, new: 3}
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    assert vs["spec"]["http"][0] == {
        "name": "beta-users",
        "match": [{"headers": {"x-beta": {"exact": "yes"}}}],
        "route": [{"destination": {"host": "web-canary", "port": {"number": 80}}, "weight": 100}],
    }
    assert _weights(h) == [("web-stable", 90), ("web-canary", 10)]
    h.patch_status({"pauseConditions": None})
    h.settle()
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    assert [r["name"] for r in vs["spec"]["http"]] == ["primary"]


def test_dynamic_stable_scale_shrinks_stable(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, [{"setWeight": 30}, {"pause": {}}], dynamicStableScale=True)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    assert h.replica_sets() == {stable: 7, new: 3}


def test_weight_follows_an_explicit_canary_scale(tmp_path: Path, clock: VirtualClock) -> None:
    steps = [{"setCanaryScale": {"replicas": 1}}, {"setWeight": 50}, {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    assert h.replica_sets() == {stable: 10, new: 1}
    assert _weights(h) == [("web-stable", 50), ("web-canary", 50)]
    assert h.status()["phase"] == "Paused"


def test_get_shows_routed_weights(tmp_path: Path, clock: VirtualClock) -> None:
    from typer.testing import CliRunner

    from headway.cli.main import _register_all, app

    h = _setup(tmp_path, clock, [{"setWeight": 20}, {"pause": {}}])
    assert h.status()["phase"] == "Paused"
    _register_all()
    result = CliRunner().invoke(app, ["rollouts", "get", "web", "--state-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "canary 20%, stable 80% (verified)" in result.output
