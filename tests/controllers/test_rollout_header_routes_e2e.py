"""End to end through the Rollout controller: a `setHeaderRoute` step through the Gateway API
plugin. The controller appends the plugin's header rule to the HTTPRoute and records it in the
plugin's ConfigMap; the local mesh realizes it, so at 25 % requests without the header split
30/10 while every request with it reaches v2; an abort removes the rule and sends everything,
header or not, back to v1."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest
from test_rollout_e2e import APP, _phase
from test_rollout_routers_e2e import CASES, _address, _objects, _status

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

ROUTE = ("gateway.networking.k8s.io/v1", "HTTPRoute", "web")
HEADER = {"headerName": "x-qa", "headerValue": {"exact": "yes"}}


def _rollout(image: str) -> Obj:
    routing: dict[str, Any] = {**CASES["gatewayapi"][0], "managedRoutes": [{"name": "qa"}]}
    rollout = _objects(image, routing)[-1]
    rollout["spec"]["strategy"]["canary"]["steps"] = [
        {"setWeight": 25},
        {"setHeaderRoute": {"name": "qa", "match": [HEADER]}},
        {"pause": {}},
    ]
    return rollout


async def _versions(address: str, count: int, headers: dict[str, str]) -> Counter[str]:
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/", headers=headers)
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


def _rules(runtime: Runtime) -> Any:
    return runtime.cluster.get(*ROUTE, "default")["spec"]["rules"]


async def test_gateway_api_header_route_and_abort_with_real_traffic(tmp_path: Path) -> None:
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
    user_objects = CASES["gatewayapi"][1]
    try:
        for obj in [*user_objects, *_objects("headway-demo/app:v1", {})[:-1]]:
            runtime.cluster.apply(obj, field_manager="test")
        runtime.cluster.apply(_rollout("headway-demo/app:v1"), field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        runtime.cluster.apply(_rollout("headway-demo/app:v2"), field_manager="test")
        await eventually(
            lambda: _status(runtime).get("pauseConditions"), timeout=25, what="paused at step 3"
        )
        header_rule = {
            "matches": [{"headers": [{"name": "x-qa", "type": "Exact", "value": "yes"}]}],
            "backendRefs": [{"group": "", "kind": "Service", "name": "web-canary", "port": 80}],
        }
        assert _rules(runtime)[1] == header_rule
        config_map = runtime.cluster.get("v1", "ConfigMap", "argo-gatewayapi-configmap", "default")
        assert config_map["data"] == {"httpManagedRoutes": '{"qa": {"web": 1}}'}
        address = await eventually(lambda: _address(runtime, ROUTE), timeout=10, what="address")

        async def header_reaches_v2() -> bool:
            return await _versions(address, 10, {"x-qa": "yes"}) == Counter({"v2": 10})

        await eventually_async(header_reaches_v2, timeout=20, what="header route realized")
        assert await _versions(address, 40, {}) == Counter({"v1": 30, "v2": 10})

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await eventually(lambda: len(_rules(runtime)) == 1, timeout=20, what="header rule removed")

        async def only_v1() -> bool:
            with_header = await _versions(address, 8, {"x-qa": "yes"})
            return with_header == Counter({"v1": 8}) and await _versions(address, 8, {}) == Counter(
                {"v1": 8}
            )

        await eventually_async(only_v1, timeout=20, what="every request on v1")
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
