"""Blue-green through the controller: preview, pre/post-promotion analysis, auto-promotion,
abort switching the active Service back, scale-down delays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout, service, template

from headway.clock import VirtualClock


def blue_green(**extra: Any) -> dict[str, Any]:
    return {"activeService": "web-active", "previewService": "web-preview", **extra}


def _setup(tmp_path: Path, clock: VirtualClock, **extra: Any) -> Harness:
    h = Harness(tmp_path, clock)
    h.apply(template("errors"))
    h.apply(service("web-active"))
    h.apply(service("web-preview"))
    h.apply(rollout(replicas=3, blue_green=blue_green(**extra)))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=3, blue_green=blue_green(**extra)))
    h.settle()
    return h


def _selector(h: Harness, name: str) -> str:
    svc = h.cluster.get("v1", "Service", name, "default")
    return str(svc["spec"]["selector"].get("rollouts-pod-template-hash"))


def test_manual_promotion(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, autoPromotionEnabled=False, previewReplicaCount=1)
    status = h.status()
    stable, new = status["stableRS"], status["currentPodHash"]
    assert status["phase"] == "Paused" and status["message"] == "BlueGreenPause"
    assert h.replica_sets() == {stable: 3, new: 1}
    assert _selector(h, "web-active") == stable and _selector(h, "web-preview") == new
    assert status["blueGreen"] == {"activeSelector": stable, "previewSelector": new}
    clock.advance(3600)
    h.settle()
    assert _selector(h, "web-active") == stable
    h.patch_status({"pauseConditions": None})  # promote
    h.settle()
    status = h.status()
    assert status["phase"] == "Healthy", status
    assert _selector(h, "web-active") == new and status["stableRS"] == new
    assert h.replica_sets() == {stable: 3, new: 3}  # scaleDownDelaySeconds (30) not over
    clock.advance(30)
    h.settle()
    assert h.replica_sets() == {stable: 0, new: 3}


def test_auto_promotion_seconds(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, autoPromotionSeconds=60)
    new = h.status()["currentPodHash"]
    assert h.status()["phase"] == "Paused"
    clock.advance(59)
    h.settle()
    assert h.status()["phase"] == "Paused"
    clock.advance(1)
    h.settle()
    assert h.status()["phase"] == "Healthy" and _selector(h, "web-active") == new


def test_pre_promotion_analysis_gates_the_switch(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, prePromotionAnalysis={"templates": [{"templateName": "errors"}]})
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    runs = h.runs()
    assert [r["metadata"]["name"] for r in runs] == [f"web-{new}-2-pre"]
    assert runs[0]["metadata"]["labels"]["rollout-type"] == "PrePromotion"
    assert _selector(h, "web-active") == stable
    h.set_run_phase(f"web-{new}-2-pre", "Successful")
    h.settle()
    assert _selector(h, "web-active") == new and h.status()["phase"] == "Healthy"


def test_post_promotion_failure_switches_back(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(
        tmp_path,
        clock,
        postPromotionAnalysis={"templates": [{"templateName": "errors"}]},
        abortScaleDownDelaySeconds=10,
    )
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    assert _selector(h, "web-active") == new  # switched; stable not yet moved
    assert h.status()["stableRS"] == stable
    assert h.status()["message"] == "waiting for analysis to complete"
    h.set_run_phase(f"web-{new}-2-post", "Failed", 'Metric "errors" assessed Failed')
    h.settle()
    status = h.status()
    assert _selector(h, "web-active") == stable
    assert status["phase"] == "Degraded" and f"web-{new}-2-post" in status["message"]
    assert h.replica_sets() == {stable: 3, new: 3}
    clock.advance(10)
    h.settle()
    assert h.replica_sets() == {stable: 3, new: 0}


def test_switching_a_service_keeps_the_apps_own_selector_keys(
    tmp_path: Path, clock: VirtualClock
) -> None:
    # A Service's selector is atomic: the controller wrote `{hash}` alone, which dropped
    # `app: web-active` from the selector and made the app's diff fight the Rollout over it
    # (found by tests/e2e_rollouts/test_kill_loop.py after the store learned atomic selectors).
    h = _setup(tmp_path, clock, autoPromotionEnabled=False, previewReplicaCount=1)
    status = h.status()
    hashes = {"web-active": status["stableRS"], "web-preview": status["currentPodHash"]}
    for name, pod_hash in hashes.items():
        svc = h.cluster.get("v1", "Service", name, "default")
        assert svc["spec"]["selector"] == {"app": "web", "rollouts-pod-template-hash": pod_hash}
