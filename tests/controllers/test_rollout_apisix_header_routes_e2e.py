"""End to end through the Rollout controller: a `setHeaderRoute` step through APISIX. The
controller writes the managed ApisixRoute `qa` (a copy of the user's route with the canary
alone, one priority higher, matching the header); the local mesh realizes it, so at 25 %
requests without the header split 30/10 while every request with it reaches v2; an abort
deletes the managed route and sends everything back to v1."""

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

from headway.cluster.errors import NotFound
from headway.cluster.local.runtime import Runtime
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

CASE = ROUTED["apisix"]
API = "apisix.apache.org/v2"
HEADER = {"headerName": "x-qa", "headerValue": {"exact": "yes"}}
ROUTING = {**CASE.routing, "managedRoutes": [{"name": "qa"}]}
STEPS = [
    {"setWeight": 25},
    {"setHeaderRoute": {"name": "qa", "match": [HEADER]}},
    {"pause": {}},
]


def _managed_gone(runtime: Runtime) -> bool:
    try:
        runtime.cluster.get(API, "ApisixRoute", "qa", "default")
    except NotFound:
        return True
    return False


async def test_apisix_header_route_and_abort_with_real_traffic(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        apply(runtime, *CASE.objects, *services(), rollout("v1", routing=ROUTING, steps=STEPS))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, rollout("v2", routing=ROUTING, steps=STEPS))
        await paused(runtime, "paused at step 3")
        rule = runtime.cluster.get(API, "ApisixRoute", "qa", "default")["spec"]["http"][0]
        assert rule == {
            "name": "web",
            "priority": 1,
            "match": {
                "paths": ["/*"],
                "exprs": [
                    {"subject": {"scope": "Header", "name": "x-qa"}, "op": "Equal", "value": "yes"}
                ],
            },
            "backends": [{"serviceName": "web-canary", "servicePort": 80, "weight": 100}],
        }
        backends = runtime.cluster.get(*CASE.routed, "default")["spec"]["http"][0]["backends"]
        assert [b["weight"] for b in backends] == [75, 25]
        url = await address(runtime, CASE.routed)

        async def header_reaches_v2() -> bool:
            return await versions(url, 10, {"x-qa": "yes"}) == Counter({"v2": 10})

        await eventually_async(header_reaches_v2, timeout=20, what="header route realized")
        assert await versions(url, 40) == Counter({"v1": 30, "v2": 10})

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await eventually(lambda: _managed_gone(runtime), timeout=20, what="managed route deleted")
        await only_version(url, "v1", headers=({"x-qa": "yes"}, {}))
