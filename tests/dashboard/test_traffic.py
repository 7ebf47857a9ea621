"""What the router counted, on the Rollout page: the local mesh's real counters (the router's
`RequestMetrics`, served by its own `MetricsServer`) read between two looks."""

from __future__ import annotations

import json
import re

import httpx2
from dashboard_env import Scene

from headway.dashboard.traffic import counts_by_hash, share_line
from headway.routers.dataplane.metrics import MetricsServer, RequestMetrics, render_prometheus
from headway.state_dir import RuntimePaths


def count(metrics: RequestMetrics, pod_hash: str, n: int, code: str = "200") -> None:
    metrics.add(service="web", pod_template_hash=pod_hash, route="primary", code=code, count=n,
                seconds_each=0.01)


def test_counts_by_hash_add_every_route_and_code() -> None:
    metrics = RequestMetrics()
    count(metrics, "aaa", 3)
    count(metrics, "aaa", 2, code="503")
    metrics.add(service="web", pod_template_hash="aaa", route="other", code="200", count=4,
                seconds_each=0.01)
    count(metrics, "bbb", 7)
    assert counts_by_hash(render_prometheus(metrics.snapshot())) == {"aaa": 9, "bbb": 7}


def test_share_line_says_what_share_and_over_what_time() -> None:
    assert share_line({"c": 25, "s": 75}, canary="c", stable="s", window_s=30) == (
        "router: canary 25% of 100 requests (stable 75%) in the last 30 s"
    )
    assert share_line({"s": 10}, canary="s", stable="s", window_s=None) == (
        "router: every one of 10 requests to s since the router started"
    )
    assert share_line({}, canary="c", stable="s", window_s=5) == ""


async def test_the_rollout_page_shows_what_the_router_counted_between_looks(
    scene: Scene,
) -> None:
    status = scene.harness.status()
    canary, stable = status["currentPodHash"], status["stableRS"]
    metrics = RequestMetrics()
    count(metrics, canary, 10)
    count(metrics, stable, 30)

    async def render() -> str:
        return render_prometheus(metrics.snapshot())

    server = MetricsServer(render)
    await server.start()
    try:
        host, port = server.address
        RuntimePaths(scene.state_dir).info.write_text(
            json.dumps({"metricsAddress": f"{host}:{port}"})
        )
        url = f"{scene.served.url}/rollouts/default/web/body"
        async with httpx2.AsyncClient(timeout=30) as client:
            first = (await client.get(url)).text
            count(metrics, canary, 50)  # the next 100 requests: half to the canary
            count(metrics, stable, 50)
            scene.harness.clock.advance(30)  # the dashboard reads the same virtual clock
            second = (await client.get(url)).text
    finally:
        await server.close()
    seen = re.search(r'id="rollout-observed">([^<]*)<', first)
    assert seen is not None
    assert seen.group(1) == (
        "router: canary 25% of 40 requests (stable 75%) since the router started"
    )
    seen = re.search(r'id="rollout-observed">([^<]*)<', second)
    assert seen is not None
    assert seen.group(1) == "router: canary 50% of 100 requests (stable 50%) in the last 30 s"
