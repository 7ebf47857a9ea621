"""End to end through the Rollout controller: a `setHeaderRoute` step through ALB. The
controller writes the route's `actions.qa` and `conditions.qa` annotations and puts a
`use-annotation` path for Service `qa` first on the Ingress; the local mesh realizes it, so at
25 % requests without the header split 30/10 while every request with it reaches v2; an abort
removes the annotations and the path and sends everything back to v1."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from router_e2e import (
    ROUTED,
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
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

CASE = ROUTED["alb"]
HEADER = {"headerName": "x-qa", "headerValue": {"exact": "yes"}}
PREFIX = "alb.ingress.kubernetes.io"
ROUTING = {**CASE.routing, "managedRoutes": [{"name": "qa"}]}
STEPS = [
    {"setWeight": 25},
    {"setHeaderRoute": {"name": "qa", "match": [HEADER]}},
    {"pause": {}},
]


def _ingress(runtime: Runtime) -> Obj:
    return runtime.cluster.get(*CASE.routed, "default")


def _path_services(runtime: Runtime) -> list[str]:
    paths = _ingress(runtime)["spec"]["rules"][0]["http"]["paths"]
    return [p["backend"]["service"]["name"] for p in paths]


async def test_alb_header_route_and_abort_with_real_traffic(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        apply(runtime, *CASE.objects, *services(), rollout("v1", routing=ROUTING, steps=STEPS))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, rollout("v2", routing=ROUTING, steps=STEPS))
        await paused(runtime, "paused at step 3")
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
        url = await address(runtime, CASE.routed)

        async def header_reaches_v2() -> bool:
            return await versions(url, 10, {"x-qa": "yes"}) == Counter({"v2": 10})

        await eventually_async(header_reaches_v2, timeout=20, what="header route realized")
        assert await versions(url, 40) == Counter({"v1": 30, "v2": 10})

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await eventually(
            lambda: _path_services(runtime) == ["web"], timeout=20, what="header path removed"
        )
        assert f"{PREFIX}/conditions.qa" not in _ingress(runtime)["metadata"]["annotations"]
        await only_version(url, "v1", headers=({"x-qa": "yes"}, {}))
