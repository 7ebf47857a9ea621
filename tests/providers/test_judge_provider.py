"""The headway.dev/judge provider driven by the real AnalysisController on a virtual clock,
reading router counters served over HTTP: one measurement stays in flight, gathers evidence
look by look through the run's status, and ends Failed, Successful or Inconclusive."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from provider_support import RunDriver, analysis_run

from headway.clock import VirtualClock
from headway.controllers.analysis.controller import AnalysisController
from headway.providers.judge import JudgeConfigError, judge_config
from headway.providers.registry import default_registry

CANARY, STABLE = "c4n4ry", "st4b1e"


@dataclass
class Router:
    """Cumulative counters per hash, as the router's /metrics would show them."""

    counts: dict[str, list[float]] = field(default_factory=lambda: {CANARY: [0, 0], STABLE: [0, 0]})
    up: bool = True

    def serve(self, *, canary: tuple[int, int], stable: tuple[int, int]) -> None:
        for pod_hash, (requests, bad) in ((CANARY, canary), (STABLE, stable)):
            self.counts[pod_hash][0] += requests
            self.counts[pod_hash][1] += bad

    def text(self) -> str:
        lines = ["# TYPE headway_requests_total counter"]
        for pod_hash, (requests, bad) in self.counts.items():
            labels = f'service="web",rollouts_pod_template_hash="{pod_hash}"'
            lines.append(f'headway_requests_total{{{labels},code="200"}} {requests - bad}')
            lines.append(f'headway_requests_total{{{labels},code="500"}} {bad}')
        return "\n".join(lines) + "\n"

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if not self.up:
            raise httpx2.ConnectError("connection refused", request=request)
        return httpx2.Response(200, text=self.text())


def judge_metric(**more: Any) -> dict[str, Any]:
    config = {
        "address": "http://router.test/metrics",
        "canaryHash": CANARY,
        "stableHash": STABLE,
        "every": "5s",
        "deadline": "2m",
        **more,
    }
    return {"name": "judge", "provider": {"plugin": {"headway.dev/judge": config}}}


@pytest.fixture
def router() -> Router:
    return Router()


@pytest.fixture
async def driver(tmp_path: Path, router: Router) -> AsyncIterator[RunDriver]:
    clock = VirtualClock()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(router.handle)) as client:
        run = RunDriver(tmp_path, clock, client)
        yield run
        run.close()


async def look(driver: RunDriver, clock_seconds: float = 5) -> dict[str, Any]:
    await driver.step()
    assert isinstance(driver.clock, VirtualClock)
    driver.clock.advance(clock_seconds)
    return driver.status()


async def test_a_canary_five_times_worse_is_failed_within_seconds(
    driver: RunDriver, router: Router
) -> None:
    driver.cluster.create(analysis_run(judge_metric()))
    status = await look(driver)
    seen = 0
    while status.get("phase") in (None, "Running", "Pending"):
        router.serve(canary=(50, 3), stable=(450, 4))  # ~5% against ~1% each 5 s
        status = await look(driver)
        seen += 1
        assert seen < 24, status
    assert status["phase"] == "Failed", status
    (measurement,) = driver.measurements()
    assert measurement["phase"] == "Failed"
    assert float(measurement["metadata"]["judge.logRatio"]) >= float(
        measurement["metadata"]["judge.failAbove"]
    )
    assert "worse than stable" in measurement["message"]
    assert measurement["metadata"]["judge.canary"].startswith(f"{50 * seen} requests")


async def test_an_identical_canary_passes_once_the_evidence_says_so(
    driver: RunDriver, router: Router
) -> None:
    driver.cluster.create(analysis_run(judge_metric(deadline="10m")))
    status = await look(driver)
    in_flight_values = []
    while status.get("phase") in (None, "Running", "Pending"):
        router.serve(canary=(50, 5), stable=(450, 45))  # both 10%
        status = await look(driver)
        in_flight_values += [m.get("value") for m in driver.measurements()]
    assert status["phase"] == "Successful", status
    assert any(v and v.startswith("log LR") for v in in_flight_values)  # progress was shown
    (measurement,) = driver.measurements()
    assert float(measurement["metadata"]["judge.logRatio"]) <= float(
        measurement["metadata"]["judge.passBelow"]
    )


async def test_no_traffic_on_the_canary_is_inconclusive_at_the_deadline_never_a_pass(
    driver: RunDriver, router: Router
) -> None:
    driver.cluster.create(analysis_run(judge_metric(deadline="1m")))
    status = await look(driver)
    for _ in range(14):
        router.serve(canary=(0, 0), stable=(500, 5))
        status = await look(driver)
    assert status["phase"] == "Inconclusive", status
    assert "no decision by the deadline" in driver.measurements()[-1]["message"]


async def test_a_dead_router_gives_no_evidence_and_ends_inconclusive(
    driver: RunDriver, router: Router
) -> None:
    router.up = False
    driver.cluster.create(analysis_run(judge_metric(deadline="30s")))
    for _ in range(8):
        status = await look(driver)
    assert status["phase"] == "Inconclusive", status
    assert "last reading failed" in driver.measurements()[-1]["message"]


async def test_a_router_restart_resets_the_starting_point_without_inventing_evidence(
    driver: RunDriver, router: Router
) -> None:
    driver.cluster.create(analysis_run(judge_metric()))
    await look(driver)
    router.serve(canary=(100, 1), stable=(900, 9))
    await look(driver)
    router.counts = {CANARY: [10, 10], STABLE: [10, 0]}  # restarted: counters went down
    await look(driver)
    (measurement,) = driver.measurements()
    assert measurement["metadata"]["judge.canary"].startswith("100 requests, 1 5xx")


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"stableHash": "x"}, "canaryHash"),
        ({"canaryHash": "x", "stableHash": "y", "worseBy": "0.5"}, "worseBy"),
        ({"canaryHash": "x", "stableHash": "y", "signal": "latency"}, "slowerThan"),
        ({"canaryHash": "x", "stableHash": "y", "deadline": "soon"}, "deadline"),
        ({"canaryHash": "x", "stableHash": "y", "colour": "red"}, "colour"),
    ],
)
def test_a_bad_setting_is_named(config: dict[str, Any], field: str) -> None:
    with pytest.raises(JudgeConfigError, match=field):
        judge_config({"headway.dev/judge": config})


async def test_a_restarted_controller_resumes_the_same_test(
    driver: RunDriver, router: Router
) -> None:
    driver.cluster.create(analysis_run(judge_metric()))
    await look(driver)
    router.serve(canary=(50, 3), stable=(450, 4))
    await look(driver)
    (before,) = driver.measurements()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(router.handle)) as client:
        driver.controller = AnalysisController(
            providers=default_registry(client, driver.clock), clock=driver.clock
        )
        router.serve(canary=(50, 3), stable=(450, 4))
        await look(driver)
    (after,) = driver.measurements()
    assert after["startedAt"] == before["startedAt"]  # the same measurement, still in flight
    assert before["metadata"]["judge.canary"].startswith("50 requests, 3 5xx")
    assert after["metadata"]["judge.canary"].startswith("100 requests, 6 5xx")
    assert float(after["metadata"]["judge.logRatio"]) > float(before["metadata"]["judge.logRatio"])
