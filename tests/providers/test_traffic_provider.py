"""The headway.dev/traffic provider against a real embedded router serving real requests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from provider_support import request_for

from headway.analysis.measurement import MeasurementPhase, compile_metric_conditions
from headway.clock import VirtualClock
from headway.controllers.analysis.measure import recorded
from headway.providers.traffic import TrafficProvider
from headway.providers.traffic_window import Counters, ScrapeHistory, SeriesKey, quantile
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from routers.backends import Backend
from routers.conftest import destinations, send

STABLE, CANARY = "aaa111", "bbb222"


@pytest.fixture
def router_clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def pods(router_clock: VirtualClock) -> Iterator[tuple[Backend, Backend]]:
    stable, canary = Backend("stable-1", STABLE), Backend("canary-1", CANARY, clock=router_clock)
    yield stable, canary
    stable.stop()
    canary.stop()


@pytest.fixture
async def router(
    router_clock: VirtualClock, pods: tuple[Backend, Backend]
) -> AsyncIterator[EmbeddedRouter]:
    router = EmbeddedRouter(clock=router_clock)
    await router.start()
    await router.update_destinations(**destinations([pods[0]], [pods[1]]))
    await router.set_weight(50)
    yield router
    await router.close()


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as http:
        yield http


def traffic_metric(
    router: EmbeddedRouter, metric: str, pod_hash: str, **more: Any
) -> dict[str, Any]:
    host, port = router.metrics_address
    config = {
        "address": f"http://{host}:{port}/metrics",
        "podTemplateHash": pod_hash,
        "metric": metric,
        **more,
    }
    name = f"{metric}-{pod_hash}"
    return {"name": name, "provider": {"plugin": {"headway.dev/traffic": config}}}


async def measure(
    provider: TrafficProvider, clock: VirtualClock, raw: dict[str, Any]
) -> list[float]:
    answer = await provider.run(request_for(raw, clock))
    assert answer.has_result, answer.message
    assert isinstance(answer.result, list)
    return answer.result


async def test_error_ratio_and_requests_per_revision_over_windows(
    router: EmbeddedRouter,
    pods: tuple[Backend, Backend],
    client: httpx2.AsyncClient,
    clock: VirtualClock,
) -> None:
    provider = TrafficProvider(client, clock)
    pods[1].state.status = 500
    await send(client, router, 10)  # 5 each, the canary's all 500
    assert await measure(provider, clock, traffic_metric(router, "error-ratio", CANARY)) == [1.0]
    assert await measure(provider, clock, traffic_metric(router, "error-ratio", STABLE)) == [0.0]
    assert await measure(provider, clock, traffic_metric(router, "requests", CANARY)) == [5.0]
    # No earlier scrape of its own: the rate is everything counted, spread over the window.
    first_rate = await measure(provider, clock, traffic_metric(router, "request-rate", CANARY))
    assert first_rate == [5.0 / 60]
    clock.advance(30)
    pods[1].state.status = 200
    await send(client, router, 20)  # the window now starts at the scrapes above
    assert await measure(provider, clock, traffic_metric(router, "error-ratio", CANARY)) == [0.0]
    assert await measure(provider, clock, traffic_metric(router, "requests", CANARY)) == [10.0]
    rate = await measure(provider, clock, traffic_metric(router, "request-rate", CANARY))
    assert rate == [10.0 / 30]


async def test_no_traffic_in_the_window_and_unknown_revision_are_empty(
    router: EmbeddedRouter, client: httpx2.AsyncClient, clock: VirtualClock
) -> None:
    provider = TrafficProvider(client, clock)
    await send(client, router, 4)
    await measure(provider, clock, traffic_metric(router, "error-ratio", CANARY))
    assert await measure(provider, clock, traffic_metric(router, "requests", CANARY)) == [2.0]
    clock.advance(20)
    assert await measure(provider, clock, traffic_metric(router, "error-ratio", CANARY)) == []
    assert await measure(provider, clock, traffic_metric(router, "requests", CANARY)) == [0.0]
    raw = traffic_metric(router, "error-ratio", "ccc333")
    answer = await provider.run(request_for(raw, clock))
    assert answer.result == [] and answer.value == "[]"
    conditions = compile_metric_conditions("e", success_condition="result[0] < 0.05")
    decided = recorded(request_for(raw, clock).metric, conditions, answer)
    assert decided.phase is MeasurementPhase.FAILED
    assert "returned no data: error-ratio of hash ccc333" in decided.message


async def test_latency_p99_interpolates_in_the_bucket(
    router: EmbeddedRouter,
    pods: tuple[Backend, Backend],
    client: httpx2.AsyncClient,
    clock: VirtualClock,
) -> None:
    pods[1].state.virtual_delay = 0.3  # each canary answer takes 0.3 s on the router's clock
    await send(client, router, 10)
    provider = TrafficProvider(client, clock)
    p99 = await measure(provider, clock, traffic_metric(router, "latency-p99", CANARY))
    assert p99 == [pytest.approx(0.25 + 0.25 * 0.99)]  # all 5 in (0.25, 0.5]


async def test_unreachable_router_is_inconclusive_and_bad_config_an_error(
    client: httpx2.AsyncClient, clock: VirtualClock
) -> None:
    from prometheus_support import free_port

    provider = TrafficProvider(client, clock)
    config = {"address": f"http://127.0.0.1:{free_port()}/metrics", "metric": "requests"}
    raw = {"name": "r", "provider": {"plugin": {"headway.dev/traffic": config}}}
    answer = await provider.run(request_for(raw, clock))
    assert answer.phase is MeasurementPhase.INCONCLUSIVE
    config["metric"] = "errors"
    answer = await provider.run(request_for(raw, clock))
    assert answer.phase is MeasurementPhase.ERROR and "must be one of" in answer.message


def test_window_baseline_choice_and_counter_reset(clock: VirtualClock) -> None:
    from datetime import timedelta

    history, key, minute = (
        ScrapeHistory(),
        SeriesKey("uid", "m", "a", "", "h"),
        timedelta(minutes=1),
    )
    t0 = clock.now()
    first, since = history.window(key, Counters(10, 1), now=t0, window=minute)
    assert (first, since) == (Counters(10, 1), None)
    late = t0 + timedelta(seconds=65)  # no scrape inside the window: the newest before it
    delta, since = history.window(key, Counters(30, 1), now=late, window=minute)
    assert (delta.requests, since) == (20, t0)
    reset, _ = history.window(key, Counters(4, 0), now=late + timedelta(seconds=5), window=minute)
    assert reset.requests == 4  # the router restarted: its counters began again


def test_quantile_matches_histogram_quantile() -> None:
    inf = float("inf")
    assert quantile(0.5, ((0.1, 0), (0.2, 10), (inf, 10))) == pytest.approx(0.15)
    assert quantile(0.99, ((0.1, 0), (inf, 5))) == 0.1  # beyond the last bound: the bound
    assert quantile(0.99, ((0.1, 0), (inf, 0))) is None


async def test_address_defaults_to_the_runtime_metrics_address(
    router: EmbeddedRouter,
    client: httpx2.AsyncClient,
    clock: VirtualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HEADWAY_TRAFFIC_METRICS_ADDRESS", raising=False)
    host, port = router.metrics_address
    await send(client, router, 6)
    raw = traffic_metric(router, "requests", CANARY)
    del raw["provider"]["plugin"]["headway.dev/traffic"]["address"]
    provider = TrafficProvider(client, clock, default_address=f"{host}:{port}")
    assert await measure(provider, clock, raw) == [3.0]
    missing = await TrafficProvider(client, clock).run(request_for(raw, clock))
    assert missing.phase is MeasurementPhase.ERROR
    assert "address is not set" in missing.message


async def test_a_looked_up_address_is_read_at_each_measurement(
    router: EmbeddedRouter,
    client: httpx2.AsyncClient,
    clock: VirtualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`headway serve` started before the runtime: no address yet, then the runtime's."""
    monkeypatch.delenv("HEADWAY_TRAFFIC_METRICS_ADDRESS", raising=False)
    host, port = router.metrics_address
    await send(client, router, 6)
    raw = traffic_metric(router, "requests", CANARY)
    del raw["provider"]["plugin"]["headway.dev/traffic"]["address"]
    known: list[str] = []
    provider = TrafficProvider(client, clock, default_address=lambda: known[0] if known else None)
    early = await provider.run(request_for(raw, clock))
    assert early.phase is MeasurementPhase.ERROR and "address is not set" in early.message
    known.append(f"{host}:{port}")
    assert await measure(provider, clock, raw) == [3.0]


async def test_a_bad_canary_fails_its_analysis_run(
    router: EmbeddedRouter,
    pods: tuple[Backend, Backend],
    client: httpx2.AsyncClient,
    clock: VirtualClock,
    tmp_path: Path,
) -> None:
    from provider_support import RunDriver, analysis_run

    driver = RunDriver(tmp_path, clock, client)
    raw = traffic_metric(router, "error-ratio", "{{args.canary-hash}}")
    raw.update(interval="10s", count=3, failureLimit=1, successCondition="result[0] < 0.05")
    driver.cluster.create(analysis_run(raw, args=[{"name": "canary-hash", "value": CANARY}]))
    pods[1].state.status = 500
    for _ in range(3):
        await send(client, router, 10)
        wait = await driver.step()
        if wait is None:
            break
        clock.advance(wait)
    status, values = driver.status(), [m["value"] for m in driver.measurements()]
    driver.close()
    assert status["phase"] == "Failed"
    assert values == ["[1]", "[1]"]  # every canary answer was a 500, and two failures end it
    assert "failed (2) > failureLimit (1)" in status["message"]
