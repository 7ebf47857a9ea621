"""A real Prometheus scrapes each router and answers the PromQL the traffic-routing doc shows."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest

from prometheus_support import start_prometheus
from routers.backends import Backend
from routers.conftest import RouterFactory, destinations, send

pytestmark = [pytest.mark.prometheus, pytest.mark.slow]

MakeBackend = Callable[[str, str], Backend]
DEADLINE_SECONDS = 30.0
# As in the doc: `or vector(0)`, because a hash that never failed has no 5xx series at all.
ERROR_RATIO = (
    '(sum(rate(headway_requests_total{{rollouts_pod_template_hash="{h}",code=~"5.."}}[1m]))'
    " or vector(0))"
    ' / sum(rate(headway_requests_total{{rollouts_pod_template_hash="{h}"}}[1m]))'
)
BARE_ERROR_RATIO = (
    'sum(rate(headway_requests_total{{rollouts_pod_template_hash="{h}",code=~"5.."}}[1m]))'
    ' / sum(rate(headway_requests_total{{rollouts_pod_template_hash="{h}"}}[1m]))'
)
P99 = (
    "histogram_quantile(0.99, sum by (le) (rate("
    'headway_request_duration_seconds_bucket{{rollouts_pod_template_hash="{h}"}}[1m])))'
)


class Prometheus:
    """A ready real Prometheus scraping the router's metrics address every second."""

    def __init__(self, work_dir: Path, target: tuple[str, int]) -> None:
        work_dir.mkdir(parents=True)
        self.server = start_prometheus(work_dir, [target])
        self.url = self.server.url

    async def query(self, client: httpx2.AsyncClient, promql: str) -> float | None:
        try:
            answer = await client.get(f"{self.url}/api/v1/query", params={"query": promql})
        except httpx2.TransportError:
            return None  # not listening yet
        if answer.status_code != 200:
            return None  # listening, but not ready to answer queries yet (503)
        result = answer.json()["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    async def wait_for(
        self, client: httpx2.AsyncClient, promql: str, accept: Callable[[float], bool]
    ) -> float:
        """Poll the real server until the query's value is accepted, within a deadline."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        value = None
        while time.monotonic() < deadline:
            value = await self.query(client, promql)
            if value is not None and accept(value):
                return value
            await asyncio.sleep(0.2)
        raise AssertionError(f"{promql} never satisfied; last value {value}")

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def prometheus_at(tmp_path: Path) -> Iterator[Callable[[tuple[str, int]], Prometheus]]:
    started: list[Prometheus] = []

    def start(target: tuple[str, int]) -> Prometheus:
        started.append(Prometheus(tmp_path / "prometheus", target))
        return started[-1]

    yield start
    for server in started:
        server.stop()


async def test_documented_canary_queries_work_against_scraped_router_metrics(
    make_router: RouterFactory,
    backends: MakeBackend,
    prometheus_at: Callable[[tuple[str, int]], Prometheus],
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    canary.state.status = 500
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(50)
    prometheus = prometheus_at(router.metrics_address)
    async with httpx2.AsyncClient() as client:
        first = await send(client, router, 10)
        await prometheus.wait_for(client, "sum(headway_requests_total)", lambda v: v == 10)
        second = await send(client, router, 10)
        await prometheus.wait_for(client, "sum(headway_requests_total)", lambda v: v == 20)
        total = "sum(headway_requests_total{{rollouts_pod_template_hash='{h}'}})"
        assert await prometheus.query(client, total.format(h="bbb222")) == (
            first["500"] + second["500"]
        )
        canary_ratio = await prometheus.query(client, ERROR_RATIO.format(h="bbb222"))
        stable_ratio = await prometheus.query(client, ERROR_RATIO.format(h="aaa111"))
        stable_bare = await prometheus.query(client, BARE_ERROR_RATIO.format(h="aaa111"))
        p99 = await prometheus.query(client, P99.format(h="bbb222"))
    assert (canary_ratio, stable_ratio) == (1.0, 0.0)
    assert stable_bare is None, "without `or vector(0)` a clean hash gives no data at all"
    assert p99 is not None and math.isfinite(p99) and 0 < p99 <= 10
