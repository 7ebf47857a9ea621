"""End to end through the local mesh: a traffic-routed canary of real processes. The Rollout
controller edits the Istio VirtualService; the runtime's router splits real requests."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest
from test_rollout_e2e import API, APP, _phase

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow
HEADER = {"headerName": "x-canary", "headerValue": {"exact": "yes"}}
STEPS = [
    {"setWeight": 25},
    {"setHeaderRoute": {"name": "canary-header", "match": [HEADER]}},
    {"pause": {}},
]


def _objects(image: str) -> list[Obj]:
    container = {
        "name": "app",
        "image": image,
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }
    canary = {
        "stableService": "web-stable",
        "canaryService": "web-canary",
        "trafficRouting": {
            "istio": {"virtualService": {"name": "web", "routes": ["primary"]}},
            "managedRoutes": [{"name": "canary-header"}],
        },
        "scaleDownDelaySeconds": 0,
        "steps": STEPS,
    }
    rollout = {
        "apiVersion": API,
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [container]},
            },
            "strategy": {"canary": canary},
        },
    }
    services = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        }
        for name in ("web-stable", "web-canary")
    ]
    route = [
        {"destination": {"host": "web-stable"}, "weight": 100},
        {"destination": {"host": "web-canary"}, "weight": 0},
    ]
    vs = {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"hosts": ["web"], "http": [{"name": "primary", "route": route}]},
    }
    return [*services, vs, rollout]


def _address(runtime: Runtime) -> str | None:
    vs = runtime.cluster.get("networking.istio.io/v1beta1", "VirtualService", "web", "default")
    return (vs["metadata"].get("annotations") or {}).get("headway.dev/address")


async def _versions(
    address: str, count: int, headers: dict[str, str] | None = None
) -> Counter[str]:
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/", headers=headers or {})
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


def _mesh_serves(runtime: Runtime, canary_weight: int) -> bool:
    """The mesh reports (VirtualService status) that it serves the latest edit at this weight."""
    vs = runtime.cluster.get("networking.istio.io/v1beta1", "VirtualService", "web", "default")
    status = vs.get("status") or {}
    if status.get("observedGeneration") != vs["metadata"].get("generation"):
        return False
    weights = {d.get("role"): d.get("weight") for d in status.get("destinations") or []}
    return weights.get("canary") == canary_weight


async def _only_version(address: str, version: str, timeout: float = 10.0) -> None:
    """Within `timeout`, 8 consecutive real requests are all answered by `version` (the Service
    selectors and the mesh's endpoints follow the promotion a step after the status does)."""

    async def only() -> bool:
        return set((await _versions(address, 8)).keys()) == {version}

    await eventually_async(only, timeout=timeout, what=f"every request answered by {version}")


def _status(runtime: Runtime) -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Rollout", "web", "default").get("status") or {})


async def test_routed_canary_through_the_local_mesh(tmp_path: Path) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(
        f"images:\n  headway-demo/app:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
        "    versionFromTag: true\n"
    )
    clock = SystemClock()
    runtime = Runtime(
        state_dir=tmp_path,
        clock=clock,
        config_path=config,
        shutdown_grace_seconds=3.0,
        data_planes=RouterPlanes(),
    )
    manager = Manager(runtime.cluster, clock)
    manager.register(RolloutController(runtime.cluster, clock))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(manager.run(stop))]
    try:
        for obj in _objects("headway-demo/app:v1"):
            runtime.cluster.apply(obj, field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        address = await eventually(lambda: _address(runtime), timeout=10, what="mesh address")
        assert set((await _versions(address, 8)).keys()) == {"v1"}
        runtime.cluster.apply(_objects("headway-demo/app:v2")[-1], field_manager="test")
        await eventually(
            lambda: _status(runtime).get("pauseConditions"), timeout=25, what="paused at step 2"
        )
        await eventually(lambda: _mesh_serves(runtime, 25), timeout=10, what="mesh at 25%")
        split = await _versions(address, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split
        assert set((await _versions(address, 6, {"x-canary": "yes"})).keys()) == {"v2"}
        rollouts_actions.promote(runtime.cluster, "default", "web")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=25, what="v2 Healthy")
        await eventually(lambda: _mesh_serves(runtime, 0), timeout=10, what="mesh back at 0%")
        await _only_version(address, "v2")
        assert set((await _versions(address, 4, {"x-canary": "yes"})).keys()) == {"v2"}
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
