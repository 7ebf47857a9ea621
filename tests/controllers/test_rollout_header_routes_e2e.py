"""End to end through the Rollout controller: a `setHeaderRoute` step through the Gateway API
plugin. The controller appends the plugin's header rule to the HTTPRoute and records it in the
plugin's ConfigMap; the local mesh realizes it, so at 25 % requests without the header split
30/10 while every request with it reaches v2; an abort removes the rule and sends everything,
header or not, back to v1."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

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
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

CASE = ROUTED["gatewayapi"]
HEADER = {"headerName": "x-qa", "headerValue": {"exact": "yes"}}
ROUTING = {**CASE.routing, "managedRoutes": [{"name": "qa"}]}
STEPS = [
    {"setWeight": 25},
    {"setHeaderRoute": {"name": "qa", "match": [HEADER]}},
    {"pause": {}},
]


def _rules(runtime: Runtime) -> Any:
    return runtime.cluster.get(*CASE.routed, "default")["spec"]["rules"]


async def test_gateway_api_header_route_and_abort_with_real_traffic(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        apply(runtime, *CASE.objects, *services(), rollout("v1", routing=ROUTING, steps=STEPS))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, rollout("v2", routing=ROUTING, steps=STEPS))
        await paused(runtime, "paused at step 3")
        header_rule = {
            "matches": [{"headers": [{"name": "x-qa", "type": "Exact", "value": "yes"}]}],
            "backendRefs": [{"group": "", "kind": "Service", "name": "web-canary", "port": 80}],
        }
        assert _rules(runtime)[1] == header_rule
        config_map = runtime.cluster.get("v1", "ConfigMap", "argo-gatewayapi-configmap", "default")
        assert config_map["data"] == {"httpManagedRoutes": '{"qa": {"web": 1}}'}
        url = await address(runtime, CASE.routed)

        async def header_reaches_v2() -> bool:
            return await versions(url, 10, {"x-qa": "yes"}) == Counter({"v2": 10})

        await eventually_async(header_reaches_v2, timeout=20, what="header route realized")
        assert await versions(url, 40) == Counter({"v1": 30, "v2": 10})

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await eventually(lambda: len(_rules(runtime)) == 1, timeout=20, what="header rule removed")
        await only_version(url, "v1", headers=({"x-qa": "yes"}, {}))
