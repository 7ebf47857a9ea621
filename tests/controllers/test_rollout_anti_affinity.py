"""`antiAffinity`: the new ReplicaSet's pods avoid the nodes of the stable pods, written into
its pod template as Argo Rollouts writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout

from headway.clock import VirtualClock

STEPS = [{"setWeight": 25}, {"pause": {}}]
NODE_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [
        {"key": "pool", "operator": "In", "values": ["web"]}]}]}}}
PREFERRED = {"preferredDuringSchedulingIgnoredDuringExecution": {"weight": 80}}
REQUIRED = {"requiredDuringSchedulingIgnoredDuringExecution": {}}


def _rollout(image: str, anti: dict[str, Any]) -> dict[str, Any]:
    ro = rollout(image=image, canary={"steps": STEPS, "antiAffinity": anti})
    ro["spec"]["template"]["spec"]["affinity"] = NODE_AFFINITY
    return ro


def _affinity(h: Harness, pod_hash: str) -> dict[str, Any]:
    rs = h.cluster.get("apps/v1", "ReplicaSet", f"web-{pod_hash}", "default")
    return dict(rs["spec"]["template"]["spec"].get("affinity") or {})


def _term(stable: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchExpressions": [
            {"key": "rollouts-pod-template-hash", "operator": "In", "values": [stable]}]},
        "namespaces": ["default"],
        "topologyKey": "kubernetes.io/hostname",
    }


def test_preferred_avoids_the_stable_pods(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(_rollout("app:v1", PREFERRED))
    h.settle()
    v1 = h.status()["stableRS"]
    assert _affinity(h, v1) == NODE_AFFINITY  # nothing to avoid on the first deploy
    h.apply(_rollout("app:v2", PREFERRED))
    h.settle()
    v2 = h.status()["currentPodHash"]
    assert _affinity(h, v2) == {
        **NODE_AFFINITY,
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 80, "podAffinityTerm": _term(v1)}]},
    }


def test_required_avoids_the_stable_pods(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(_rollout("app:v1", REQUIRED))
    h.settle()
    v1 = h.status()["stableRS"]
    h.apply(_rollout("app:v2", REQUIRED))
    h.settle()
    v2 = h.status()["currentPodHash"]
    assert _affinity(h, v2)["podAntiAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": [_term(v1)]}


def test_the_term_follows_a_new_stable(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(_rollout("app:v1", PREFERRED))
    h.settle()
    h.apply(_rollout("app:v2", PREFERRED))
    h.settle()
    v2 = h.status()["currentPodHash"]
    h.apply(_rollout("app:v3", PREFERRED))  # v2 abandoned mid-canary
    h.settle()
    h.patch_status({"pauseConditions": None})
    h.settle()
    v3 = h.status()["stableRS"]
    assert v3 == h.status()["currentPodHash"]
    h.apply(_rollout("app:v2", PREFERRED))  # back to v2: its ReplicaSet still names v1
    h.settle()
    terms = _affinity(h, v2)["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms == [{"weight": 80, "podAffinityTerm": _term(v3)}]
