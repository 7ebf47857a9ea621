"""End to end through the Rollout controller: a `setHeaderRoute` step through ALB. The
controller writes the route's `actions.qa` and `conditions.qa` annotations and puts a
`use-annotation` path for Service `qa` first on the Ingress; the local mesh realizes it, so at
25 % requests without the header split 30/10 while every request with it reaches v2; an abort
removes the annotations and the path and sends everything back to v1."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_rollout_e2e import APP, _phase
from test_rollout_header_routes_e2e import _versions
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

INGRESS = ("networking.k8s.io/v1", "Ingress", "web")
HEADER = {"headerName": "x-qa", "headerValue": {"exact": "yes"}}
PREFIX = "alb.ingress.kubernetes.io"


def _rollout(image: str) -> Obj:
    routing: dict[str, Any] = {**CASES["alb"][0], "managedRoutes": [{"name": "qa"}]}
    rollout = _objects(image, routing)[-1]
    rollout["spec"]["strategy"]["canary"]["steps"] = [
        {"setWeight": 25},
        {"setHeaderRoute": {"name": "qa", "match": [HEADER]}},
        {"pause": {}},
    ]
    return rollout


def _ingress(runtime: Runtime) -> Obj:
    return runtime.cluster.get(*INGRESS, "default")


def _path_services(runtime: Runtime) -> list[str]:
    paths = _ingress(runtime)["spec"]["rules"][0]["http"]["paths"]
    return [p["backend"]["service"]["name"] for p in paths]


async def test_alb_header_route_and_abort_with_real_traffic(tmp_path: Path) -> None:
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
        for obj in [*CASES["alb"][1], *_objects("headway-demo/app:v1", {})[:-1]]:
            runtime.cluster.apply(obj, field_manager="test")
        runtime.cluster.apply(_rollout("headway-demo/app:v1"), field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        runtime.cluster.apply(_rollout("headway-demo/app:v2"), field_manager="test")
        await eventually(
            lambda: _status(runtime).get("pauseConditions"), timeout=25, what="paused at step 3"
        )
        annotations = _ingress(runtime)["metadata"]["annotations"]
        assert annotations[f"{PREFIX}/conditions.qa"] == (
            '[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"x-qa",'
            '"values":["yes"]}}]'
        )
        assert annotations[f"{PREFIX}/actions.qa"] == (
            '{"Type":"forward","ForwardConfig":{"TargetGroups":['
            '{"ServiceName":"web-canary","ServicePort":"80","Weight":100}]}}'
        )
        assert _path_services(runtime) == ["qa", "web"]
        address = await eventually(lambda: _address(runtime, INGRESS), timeout=10, what="address")

        async def header_reaches_v2() -> bool:
            return await _versions(address, 10, {"x-qa": "yes"}) == Counter({"v2": 10})

        await eventually_async(header_reaches_v2, timeout=20, what="header route realized")
        assert await _versions(address, 40, {}) == Counter({"v1": 30, "v2": 10})

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await eventually(
            lambda: _path_services(runtime) == ["web"], timeout=20, what="header path removed"
        )
        assert f"{PREFIX}/conditions.qa" not in _ingress(runtime)["metadata"]["annotations"]

        async def only_v1() -> bool:
            with_header = await _versions(address, 8, {"x-qa": "yes"})
            return with_header == Counter({"v1": 8}) and await _versions(address, 8, {}) == Counter(
                {"v1": 8}
            )

        await eventually_async(only_v1, timeout=20, what="every request on v1")
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
