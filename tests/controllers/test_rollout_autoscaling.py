"""An autoscaler (HPA, KEDA's ScaledObject) driving a Rollout through its scale subresource.

The autoscaler reads `/scale` (`status.replicas` from `status.HPAReplicas`, the pod selector
from `status.selector`) and writes `spec.replicas` there. Mid-canary the controller follows
the new count: the canary keeps its weight of the new total, the step and its pause stay.
"""

from __future__ import annotations

from pathlib import Path

from rollout_harness import API, Harness, rollout

from headway.clock import VirtualClock

STEPS = [{"setWeight": 25}, {"pause": {}}]
HPA = "horizontal-pod-autoscaler"


def _scale(h: Harness) -> dict[str, object]:
    found = h.cluster.get_scale(API, "Rollout", "web", "default")
    return {"spec": found["spec"]["replicas"], **found["status"]}


def _autoscale(h: Harness, replicas: int) -> None:
    h.cluster.update_scale(API, "Rollout", "web", "default", replicas=replicas, field_manager=HPA)


def _paused_canary(tmp_path: Path, clock: VirtualClock) -> tuple[Harness, str, str]:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    stable = h.status()["stableRS"]
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    return h, stable, h.status()["currentPodHash"]


def test_the_scale_subresource_shows_what_the_hpa_reads(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    selector = {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}
    ro = rollout(canary={"steps": STEPS})
    ro["spec"]["selector"] = selector
    ro["spec"]["template"]["metadata"]["labels"]["tier"] = "a"
    h.apply(ro)
    h.settle()
    assert _scale(h) == {"spec": 4, "replicas": 4, "selector": "app=web,tier in (a,b)"}


def test_a_scale_up_mid_canary_keeps_the_step_and_the_weight(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, stable, new = _paused_canary(tmp_path, clock)
    assert h.replica_sets() == {stable: 3, new: 1}
    _autoscale(h, 8)
    h.settle()
    status = h.status()
    assert status["currentStepIndex"] == 1 and status["phase"] == "Paused"
    assert h.replica_sets() == {stable: 6, new: 2}  # 25 % of 8
    assert _scale(h) == {"spec": 8, "replicas": 8, "selector": "app=web"}
    h.patch_status({"pauseConditions": None})  # promote
    h.settle()
    assert h.replica_sets() == {stable: 0, new: 8}
    assert h.status()["phase"] == "Healthy"


def test_a_scale_down_mid_canary_shrinks_both_sides(tmp_path: Path, clock: VirtualClock) -> None:
    h, stable, new = _paused_canary(tmp_path, clock)
    _autoscale(h, 2)
    h.settle()
    assert h.status()["currentStepIndex"] == 1
    # the nearest share to 25 % of 2 within maxSurge (1 pod): 1 canary of 3 pods (33 %)
    assert h.replica_sets() == {stable: 2, new: 1}
    assert _scale(h) == {"spec": 2, "replicas": 3, "selector": "app=web"}  # pods that exist


def test_a_blue_green_autoscaler_counts_only_the_active_pods(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    for name in ("active", "preview"):
        h.apply({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": name, "namespace": "default"},
                 "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    strategy = {"activeService": "active", "previewService": "preview",
                "autoPromotionEnabled": False}
    h.apply(rollout(replicas=3, blue_green=strategy))
    h.settle()
    active = h.status()["stableRS"]
    h.apply(rollout(image="app:v2", replicas=3, blue_green=strategy))
    h.settle()
    assert sorted(h.replica_sets().values()) == [3, 3]  # the preview is up beside the active
    shown = _scale(h)
    assert shown == {"spec": 3, "replicas": 3,
                     "selector": f"app=web,rollouts-pod-template-hash={active}"}
