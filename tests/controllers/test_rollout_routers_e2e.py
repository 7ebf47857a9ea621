"""End to end through the Rollout controller: a canary routed by SMI, Traefik, the Gateway API
plugin, ALB, NGINX, Ambassador, APISIX or App Mesh pauses at 25 % with real traffic split
30/10, then an abort sends every request back to v1. The controller picks the reconciler
from the Rollout's trafficRouting; the local mesh realizes what it writes."""

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
    split_event,
    versions,
)

from headway.steering import rollouts as rollouts_actions
from polling import eventually

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("router", list(ROUTED))
async def test_routed_canary_and_abort_through_each_router(tmp_path: Path, router: str) -> None:
    case = ROUTED[router]
    async with running(tmp_path) as runtime:
        apply(runtime, *case.objects, *services(), rollout("v1", routing=case.routing))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, rollout("v2", routing=case.routing))
        await paused(runtime, "paused at step 2")
        url = await address(runtime, case.routed)
        await eventually(
            lambda: split_event(runtime, case.routed[2], "web-canary", 25),
            timeout=10,
            what="mesh at 25%",
        )
        split = await versions(url, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await only_version(url, "v1")
        assert await versions(url, 20) == Counter({"v1": 20})
