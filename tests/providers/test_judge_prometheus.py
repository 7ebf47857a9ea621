"""The judge reading both revisions' counters from Prometheus: one pair of queries with
`{{hash}}`, run for each revision; the real analysis controller decides on a virtual clock."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from provider_support import RunDriver, analysis_run

from headway.clock import VirtualClock
from headway.providers.judge import JudgeConfigError, judge_config

CANARY, STABLE = "c4n4ry", "st4b1e"
REQUESTS = 'sum(http_requests_total{rollouts_pod_template_hash="{{hash}}"})'
BAD = 'sum(http_requests_total{rollouts_pod_template_hash="{{hash}}",code=~"5.."})'


@dataclass
class Prometheus:
    """Answers the two queries per hash from counters it keeps; records what was asked."""

    counts: dict[str, list[float]] = field(default_factory=lambda: {CANARY: [0, 0], STABLE: [0, 0]})
    asked: list[str] = field(default_factory=list)
    answer_nan: bool = False

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        query = request.url.params["query"]
        self.asked.append(query)
        pod_hash = CANARY if CANARY in query else STABLE
        value = self.counts[pod_hash][1 if "code=~" in query else 0]
        shown = "NaN" if self.answer_nan else str(value)
        result = [{"metric": {}, "value": [0, shown]}] if value or self.answer_nan else []
        body = {"status": "success", "data": {"resultType": "vector", "result": result}}
        return httpx2.Response(200, text=json.dumps(body))


def judge_metric(**more: Any) -> dict[str, Any]:
    config = {
        "canaryHash": CANARY,
        "stableHash": STABLE,
        "every": "5s",
        "deadline": "2m",
        "prometheus": {"address": "http://prometheus.test:9090", "requests": REQUESTS, "bad": BAD},
        **more,
    }
    return {"name": "judge", "provider": {"plugin": {"headway.dev/judge": config}}}


@pytest.fixture
def prometheus() -> Prometheus:
    return Prometheus()


@pytest.fixture
async def driver(tmp_path: Path, prometheus: Prometheus) -> AsyncIterator[RunDriver]:
    clock = VirtualClock()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(prometheus.handle)) as client:
        run = RunDriver(tmp_path, clock, client)
        yield run
        run.close()


async def look(driver: RunDriver) -> dict[str, Any]:
    await driver.step()
    assert isinstance(driver.clock, VirtualClock)
    driver.clock.advance(5)
    return driver.status()


async def test_a_worse_canary_counted_by_prometheus_is_failed(
    driver: RunDriver, prometheus: Prometheus
) -> None:
    driver.cluster.create(analysis_run(judge_metric()))
    status = await look(driver)
    while status.get("phase") in (None, "Running", "Pending"):
        for pod_hash, (requests, bad) in ((CANARY, (50, 3)), (STABLE, (450, 4))):
            prometheus.counts[pod_hash][0] += requests
            prometheus.counts[pod_hash][1] += bad
        status = await look(driver)
        assert len(prometheus.asked) < 100, status
    assert status["phase"] == "Failed", status
    assert REQUESTS.replace("{{hash}}", CANARY) in prometheus.asked
    assert BAD.replace("{{hash}}", STABLE) in prometheus.asked
    (measurement,) = driver.measurements()
    assert "worse than stable" in measurement["message"]


async def test_an_answer_that_is_not_a_count_adds_no_evidence(
    driver: RunDriver, prometheus: Prometheus
) -> None:
    prometheus.answer_nan = True
    driver.cluster.create(analysis_run(judge_metric(deadline="30s")))
    for _ in range(8):
        status = await look(driver)
    assert status["phase"] == "Inconclusive", status
    message = driver.measurements()[-1]["message"]
    assert "not a finite count" in message and "no decision by the deadline" in message


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"address": "http://p", "requests": "sum(x)", "bad": BAD}, "requests must contain"),
        ({"address": "http://p", "requests": REQUESTS}, "bad is required"),
        ({"requests": REQUESTS, "bad": BAD, "step": 1}, "unknown field"),
    ],
)
def test_a_bad_prometheus_block_is_named(block: dict[str, Any], field: str) -> None:
    config = {"canaryHash": "x", "stableHash": "y", "prometheus": block}
    with pytest.raises(JudgeConfigError, match=f"prometheus.*{field}"):
        judge_config({"headway.dev/judge": config})
