"""Managed routes (setHeaderRoute, setMirrorRoute) stand only while a step of the current
revision has set them and the canary has an available pod.

Argo Rollouts (`rollout/trafficrouting.go`, `reconcileTrafficRouting`) calls
`RemoveManagedRoutes` when the rollout is fully promoted, aborted, fully promoted on request,
and while the new ReplicaSet is missing or has no available replica ("a V2 ReplicaSet that was
scaled up, but is now defunct ... managed routes ... would continue to direct traffic to the
canary service"). Headway replays the steps up to the current one on every reconcile, so the
routes also follow the step position: a route the steps set later is taken away (a new
revision, or an edit of the steps, restarting them while the canary has pods).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout, service
from test_rollout_traffic import CRD, VS, VS_API

from headway.clock import VirtualClock

HEADER = {
    "setHeaderRoute": {
        "name": "beta",
        "match": [{"headerName": "x-beta", "headerValue": {"exact": "yes"}}],
    }
}
MIRROR = {"setMirrorRoute": {"name": "shadow", "match": [{"method": {"exact": "GET"}}]}}
STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    HEADER,
    {"pause": {}},
    {"setWeight": 40},
    {"pause": {}},
]


def _canary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "stableService": "web-stable",
        "canaryService": "web-canary",
        "trafficRouting": {
            "istio": {"virtualService": {"name": "web", "routes": ["primary"]}},
            "managedRoutes": [{"name": "beta"}, {"name": "shadow"}],
        },
        "steps": steps,
    }


def _setup(tmp_path: Path, clock: VirtualClock, steps: list[dict[str, Any]]) -> Harness:
    h = Harness(tmp_path, clock)
    for obj in (CRD, VS, service("web-stable"), service("web-canary")):
        h.apply(obj)
    h.apply(rollout(replicas=10, canary=_canary(steps)))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=10, canary=_canary(steps)))
    h.settle()
    return h


def _routes(h: Harness) -> list[str]:
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    return [str(r.get("name")) for r in vs["spec"]["http"]]


def _canary_hash(h: Harness) -> str:
    svc = h.cluster.get("v1", "Service", "web-canary", "default")
    return str(svc["spec"]["selector"].get("rollouts-pod-template-hash"))


def _available(h: Harness, pod_hash: str) -> int:
    for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
        if rs["metadata"]["labels"].get("rollouts-pod-template-hash") == pod_hash:
            return int((rs.get("status") or {}).get("availableReplicas") or 0)
    return 0


def _header_traffic_reaches(h: Harness, pod_hash: str) -> bool:
    """A request carrying x-beta: yes would reach a pod of `pod_hash` right now."""
    return "beta" in _routes(h) and _canary_hash(h) == pod_hash and _available(h, pod_hash) > 0


def test_a_new_revision_gets_no_header_traffic_before_its_header_step(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """v2 paused after setHeaderRoute; v3 is pushed. At every point until v3 passes its own
    setHeaderRoute step, header-matching users must not reach v3's pods."""
    h = _setup(tmp_path, clock, STEPS)
    assert h.status()["currentStepIndex"] == 2 and "beta" in _routes(h)
    clock.advance(1)
    h.apply(rollout(image="app:v3", replicas=10, canary=_canary(STEPS)))
    seen_without_route = False
    for _ in range(40):
        h.step()
        h.kubelet()
        status = h.status()
        v3 = str(status.get("currentPodHash"))
        passed_header_step = int(status.get("currentStepIndex") or 0) > 1
        assert passed_header_step or not _header_traffic_reaches(h, v3), status
        seen_without_route = seen_without_route or "beta" not in _routes(h)
        if passed_header_step:
            break
    assert seen_without_route
    assert h.status()["currentStepIndex"] == 2 and "beta" in _routes(h)  # v3's own step


def test_steps_restarted_by_an_edit_take_the_header_route_away(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """The canary keeps its pods when only the steps change (Argo's currentStepHash restarts
    them): the route the old position stood for must go until the new steps set it."""
    steps = [{"setCanaryScale": {"replicas": 2}}, HEADER, {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    assert h.status()["currentStepIndex"] == 2 and "beta" in _routes(h)
    edited = [{"setCanaryScale": {"replicas": 2}}, {"pause": {}}, HEADER, {"pause": {}}]
    h.apply(rollout(image="app:v2", replicas=10, canary=_canary(edited)))
    h.settle()
    assert h.status()["currentStepIndex"] == 1
    assert _available(h, _canary_hash(h)) == 2
    assert _routes(h) == ["primary"]
    h.patch_status({"pauseConditions": None})
    h.settle()
    assert h.status()["currentStepIndex"] == 3 and _routes(h) == ["beta", "primary"]


def test_managed_routes_go_while_the_canary_has_no_available_pod(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Every canary pod becomes unavailable at the pause after the route steps: the header and
    mirror routes would send users to errors (and copies nowhere), so both go; once a pod is
    available again the steps in force put them back."""
    steps = [{"setWeight": 20}, HEADER, MIRROR, {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    assert _routes(h) == ["beta", "shadow", "primary"]
    v2 = str(h.status()["currentPodHash"])
    v2_set = next(
        rs["metadata"]["name"]
        for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default")
        if rs["metadata"]["labels"]["rollouts-pod-template-hash"] == v2
    )
    h.unavailable.add(v2_set)
    h.kubelet()
    h.settle()
    assert _available(h, v2) == 0
    assert _routes(h) == ["primary"]
    assert h.status()["currentStepIndex"] == 3
    h.unavailable.clear()
    h.settle()
    assert _routes(h) == ["beta", "shadow", "primary"]


def test_a_full_promotion_request_takes_the_routes_away_at_once(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """`promote --full` (status.promoteFull): Argo removes the managed routes on that
    reconcile already, before the canary has been scaled up and made stable."""
    h = _setup(tmp_path, clock, STEPS)
    assert "beta" in _routes(h)
    h.patch_status({"promoteFull": True})
    h.step()
    assert h.status().get("stableRS") != h.status()["currentPodHash"]
    assert _routes(h) == ["primary"]


def test_an_edit_that_drops_the_header_step_drops_its_route(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """The steps lose their setHeaderRoute (the name stays in managedRoutes): no step names
    the route any more, so nothing would ever remove it before promotion; it goes at once."""
    steps = [{"setCanaryScale": {"replicas": 2}}, HEADER, {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    assert "beta" in _routes(h)
    h.apply(rollout(image="app:v2", replicas=10, canary=_canary([steps[0], {"pause": {}}])))
    h.settle()
    assert h.status()["currentStepIndex"] == 1
    assert _available(h, _canary_hash(h)) == 2
    assert _routes(h) == ["primary"]
