"""`setMirrorRoute` through Istio: the exact VirtualService after each step, written by the
Rollout controller, compared with what Argo Rollouts writes.

The expected objects follow argo-rollouts `rollout/trafficrouting/istio/istio.go`:
`createMirrorRoute` (match as `method`/`uri`/`headers`, `route` copied from the first split
route through its Go types, `mirror` to the canary host or subset with the port number of that
route's first destination, `mirrorPercentage: {value: P}`, 100 when unset),
`reconcileVirtualServiceMirrorRoutes` (a step without `match` removes the route),
`orderRoutes` (managed routes on top, in `managedRoutes` order), `generateVirtualServicePatches`
(a setWeight also weighs the managed mirror routes) and `RemoveManagedRoutes` (promotion and
abort remove them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout, service
from test_rollout_traffic import CRD, VS, VS_API

from headway.clock import VirtualClock
from headway.model.obj import Obj

MATCH = [{"method": {"exact": "GET"}, "path": {"prefix": "/api"}}]
ISTIO_MATCH = [{"method": {"exact": "GET"}, "uri": {"prefix": "/api"}}]
STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    {"setMirrorRoute": {"name": "shadow", "match": MATCH, "percentage": 50}},
    {"pause": {}},
    {"setWeight": 40},
    {"pause": {}},
    {"setMirrorRoute": {"name": "shadow"}},
    {"pause": {}},
]


def _canary(steps: list[dict[str, Any]], managed: list[str]) -> dict[str, Any]:
    return {
        "stableService": "web-stable",
        "canaryService": "web-canary",
        "trafficRouting": {
            "istio": {"virtualService": {"name": "web", "routes": ["primary"]}},
            "managedRoutes": [{"name": name} for name in managed],
        },
        "steps": steps,
    }


def _setup(
    tmp_path: Path,
    clock: VirtualClock,
    steps: list[dict[str, Any]],
    managed: tuple[str, ...] = ("shadow",),
) -> Harness:
    h = Harness(tmp_path, clock)
    for obj in (CRD, VS, service("web-stable"), service("web-canary")):
        h.apply(obj)
    h.apply(rollout(replicas=10, canary=_canary(steps, list(managed))))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=10, canary=_canary(steps, list(managed))))
    h.settle()
    return h


def _http(h: Harness) -> list[Obj]:
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    return list(vs["spec"]["http"])


def _split(stable: int, canary: int) -> list[Obj]:
    """The primary route's destinations as the user wrote them, at these weights."""
    return [
        {"destination": {"host": "web-stable", "port": {"number": 80}}, "weight": stable},
        {"destination": {"host": "web-canary", "port": {"number": 80}}, "weight": canary},
    ]


def _primary(stable: int, canary: int) -> Obj:
    return {"name": "primary", "route": _split(stable, canary)}


def _argo_mirror_route(stable: int, canary: int, percent: int) -> Obj:
    """What createMirrorRoute writes: Go's `weight,omitempty` drops a 0 weight."""
    route = [
        {**d, "weight": d["weight"]} if d["weight"] else {"destination": d["destination"]}
        for d in _split(stable, canary)
    ]
    return {
        "name": "shadow",
        "match": ISTIO_MATCH,
        "route": route,
        "mirror": {"host": "web-canary", "port": {"number": 80}},
        "mirrorPercentage": {"value": percent},
    }


def _resume(h: Harness) -> None:
    h.patch_status({"pauseConditions": None})
    h.settle()


def test_each_step_writes_the_virtual_service_argo_writes(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _setup(tmp_path, clock, STEPS)
    assert h.status()["currentStepIndex"] == 2  # the mirror step completed by itself
    assert _http(h) == [_argo_mirror_route(80, 20, 50), _primary(80, 20)]

    _resume(h)  # setWeight 40 weighs the managed mirror route too (generateVirtualServicePatches)
    assert h.status()["currentStepIndex"] == 4
    assert _http(h) == [_argo_mirror_route(60, 40, 50), _primary(60, 40)]

    _resume(h)  # a setMirrorRoute without match removes the route
    assert h.status()["currentStepIndex"] == 6
    assert _http(h) == [{"name": "primary", "route": _split(60, 40)}]

    _resume(h)
    assert h.status()["phase"] == "Healthy"
    assert _http(h) == [{"name": "primary", "route": _split(100, 0)}]


def test_promotion_removes_the_mirror_route(tmp_path: Path, clock: VirtualClock) -> None:
    """RemoveManagedRoutes at the end: a mirror the steps never removed goes with the rollout."""
    steps = STEPS[:3]
    h = _setup(tmp_path, clock, steps)
    assert [r["name"] for r in _http(h)] == ["shadow", "primary"]
    _resume(h)
    assert h.status()["phase"] == "Healthy"
    assert _http(h) == [{"name": "primary", "route": _split(100, 0)}]


def test_abort_removes_the_mirror_route(tmp_path: Path, clock: VirtualClock) -> None:
    h = _setup(tmp_path, clock, STEPS)
    assert [r["name"] for r in _http(h)] == ["shadow", "primary"]
    h.patch_status({"abort": True})
    h.settle()
    assert h.status()["phase"] == "Degraded"
    assert _http(h) == [{"name": "primary", "route": _split(100, 0)}]


def test_mirror_and_header_routes_sit_on_top_in_managed_routes_order(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """orderRoutes: the managed routes in `managedRoutes` order, then the user's; the mirror
    percentage defaults to 100 and headers are written as Istio header matches."""
    header = {
        "setHeaderRoute": {
            "name": "beta",
            "match": [{"headerName": "x-beta", "headerValue": {"exact": "yes"}}],
        }
    }
    match = [{"headers": {"x-a": {"regex": "a+"}}}]
    mirror = {"setMirrorRoute": {"name": "shadow", "match": match}}
    steps = [{"setWeight": 10}, mirror, header, {"pause": {}}]
    h = _setup(tmp_path, clock, steps, managed=("beta", "shadow"))
    http = _http(h)
    assert [r["name"] for r in http] == ["beta", "shadow", "primary"]
    assert http[1] == {
        "name": "shadow",
        "match": [{"headers": {"x-a": {"regex": "a+"}}}],
        "route": _split(90, 10),
        "mirror": {"host": "web-canary", "port": {"number": 80}},
        "mirrorPercentage": {"value": 100},
    }


def test_a_newer_revision_restarting_the_steps_takes_the_mirror_away(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """v2 mirrors; v3 arrives and the steps start again before the mirror step: the route no
    longer stands for any step, so it goes (Argo removes managed routes while the new
    ReplicaSet has no available pod; here the VirtualService follows the step position, and
    v3's canary pods are up at its first pause)."""
    steps = [{"setCanaryScale": {"replicas": 2}}, {"pause": {}}, STEPS[1], {"pause": {}}]
    h = _setup(tmp_path, clock, steps)
    _resume(h)
    assert [r["name"] for r in _http(h)] == ["shadow", "primary"]
    clock.advance(1)
    h.apply(rollout(image="app:v3", replicas=10, canary=_canary(steps, ["shadow"])))
    h.settle()
    assert h.status()["currentStepIndex"] == 1
    assert [r["name"] for r in _http(h)] == ["primary"]
