"""End to end through the local mesh: a traffic-routed canary of real processes. The Rollout
controller edits the Istio VirtualService; the runtime's router splits real requests."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from router_e2e import (
    address,
    apply,
    healthy,
    only_version,
    paused,
    rollout,
    running,
    services,
    versions,
)

from headway.cluster.local.runtime import Runtime
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually

pytestmark = pytest.mark.slow
ISTIO = "networking.istio.io/v1beta1"
VIRTUAL_SERVICE = (ISTIO, "VirtualService", "web")
HEADER = {"headerName": "x-canary", "headerValue": {"exact": "yes"}}
STEPS = [
    {"setWeight": 25},
    {"setHeaderRoute": {"name": "canary-header", "match": [HEADER]}},
    {"pause": {}},
]
ROUTING = {
    "istio": {"virtualService": {"name": "web", "routes": ["primary"]}},
    "managedRoutes": [{"name": "canary-header"}],
}


def _virtual_service() -> Obj:
    route = [
        {"destination": {"host": "web-stable"}, "weight": 100},
        {"destination": {"host": "web-canary"}, "weight": 0},
    ]
    return {
        "apiVersion": ISTIO,
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"hosts": ["web"], "http": [{"name": "primary", "route": route}]},
    }


def _mesh_serves(runtime: Runtime, canary_weight: int) -> bool:
    """The mesh reports (VirtualService status) that it serves the latest edit at this weight."""
    vs = runtime.cluster.get(*VIRTUAL_SERVICE, "default")
    status = vs.get("status") or {}
    if status.get("observedGeneration") != vs["metadata"].get("generation"):
        return False
    weights = {d.get("role"): d.get("weight") for d in status.get("destinations") or []}
    return weights.get("canary") == canary_weight


async def test_routed_canary_through_the_local_mesh(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        apply(
            runtime,
            *services("web-stable", "web-canary"),
            _virtual_service(),
            rollout("v1", routing=ROUTING, steps=STEPS),
        )
        await healthy(runtime, "v1 Healthy")
        url = await address(runtime, VIRTUAL_SERVICE)
        assert set((await versions(url, 8)).keys()) == {"v1"}
        apply(runtime, rollout("v2", routing=ROUTING, steps=STEPS))
        await paused(runtime, "paused at step 2")
        await eventually(lambda: _mesh_serves(runtime, 25), timeout=10, what="mesh at 25%")
        split = await versions(url, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split
        assert set((await versions(url, 6, {"x-canary": "yes"})).keys()) == {"v2"}
        rollouts_actions.promote(runtime.cluster, "default", "web")
        await healthy(runtime, "v2 Healthy")
        await eventually(lambda: _mesh_serves(runtime, 0), timeout=10, what="mesh back at 0%")
        await only_version(url, "v2")
        assert set((await versions(url, 4, {"x-canary": "yes"})).keys()) == {"v2"}
