"""End to end through the Rollout controller, with real traffic: a header route set by an
old revision's later step does not carry over to a newer revision.

v2 passes `setHeaderRoute` (every `x-qa: yes` request on v2); v3 is pushed and pauses at its
first pause, before its own header step. Header-matching requests must then go through the
25 % split like any other (30 on v1, 10 on v3 of 40), not all to v3's pods, which no analysis
and no step has opened to them. Through each router with managed header routes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from router_e2e import ROUTED, address, apply, healthy, paused, rollout, running, services, status
from router_e2e import versions as answered_by

from headway.cluster.local.runtime import Runtime
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

HEADER = {"x-qa": "yes"}
STEPS = [
    {"setWeight": 25},
    {"pause": {}},
    {
        "setHeaderRoute": {
            "name": "qa",
            "match": [{"headerName": "x-qa", "headerValue": {"exact": "yes"}}],
        }
    },
    {"pause": {}},
]


def _paused_at(runtime: Runtime, index: int, pod_hash: str | None = None) -> bool:
    st = status(runtime)
    return (
        bool(st.get("pauseConditions"))
        and st.get("currentStepIndex") == index
        and (pod_hash is None or st.get("currentPodHash") != pod_hash)
    )


@pytest.mark.parametrize("router", ["alb", "gatewayapi", "apisix"])
async def test_a_newer_revision_gets_no_header_traffic_before_its_header_step(
    tmp_path: Path, router: str
) -> None:
    case = ROUTED[router]
    routing = {**case.routing, "managedRoutes": [{"name": "qa"}]}
    async with running(tmp_path) as runtime:
        apply(runtime, *case.objects, *services(), rollout("v1", routing=routing, steps=STEPS))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, rollout("v2", routing=routing, steps=STEPS))
        await paused(runtime, "v2 paused at step 2")
        rollouts_actions.promote(runtime.cluster, "default", "web")
        await eventually(lambda: _paused_at(runtime, 3), timeout=25, what="v2 past its header step")
        url = await address(runtime, case.routed)

        async def header_on(version: str) -> bool:
            return await answered_by(url, 10, HEADER) == Counter({version: 10})

        await eventually_async(lambda: header_on("v2"), timeout=20, what="v2 header route")

        v2_hash = status(runtime)["currentPodHash"]
        apply(runtime, rollout("v3", routing=routing, steps=STEPS))
        await eventually(
            lambda: _paused_at(runtime, 1, v2_hash), timeout=25, what="v3 paused at step 2"
        )

        async def split_realized() -> bool:
            return await answered_by(url, 40) == Counter({"v1": 30, "v3": 10})

        await eventually_async(split_realized, timeout=20, what="v3 at 25 %")
        assert await answered_by(url, 40, HEADER) == Counter({"v1": 30, "v3": 10})
