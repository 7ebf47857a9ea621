"""The prometheus provider against a real Prometheus scraping an exporter the test serves."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from provider_support import RunDriver, analysis_run, request_for

from headway.analysis.measurement import MeasurementPhase
from headway.clock import SystemClock, VirtualClock
from headway.providers.prometheus import PrometheusProvider, evaluate_time
from prometheus_support import (
    Exporter,
    PrometheusServer,
    StartExporter,
    StartPrometheus,
    start_prometheus,
)

pytestmark = [pytest.mark.prometheus, pytest.mark.slow]

EXPORTED = 'demo_ratio{hash="abc"} 0.02\ndemo_ratio{hash="def"} 0.5\ndemo_nan NaN\ndemo_inf +Inf\n'


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as http:
        yield http


def _start_scraping(work_dir: Path) -> tuple[PrometheusServer, Exporter]:
    source = Exporter(EXPORTED)
    server = start_prometheus(work_dir, [source.address])
    server.wait_for_now("demo_ratio", lambda values: len(values) == 2)
    return server, source


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PrometheusServer, Exporter]]:
    """One server for the tests that only query (starting one takes seconds on a busy box)."""
    server, source = _start_scraping(tmp_path_factory.mktemp("prometheus"))
    yield server, source
    server.stop()
    source.stop()


@pytest.fixture
def scraped(
    prometheus: StartPrometheus, exporter: StartExporter
) -> tuple[PrometheusServer, Exporter]:
    """A server of the test's own (for the test that stops it)."""
    source = exporter(EXPORTED)
    server = prometheus([source.address])
    server.wait_for_now("demo_ratio", lambda values: len(values) == 2)
    return server, source


def prom_metric(address: str, query: str, **extra: object) -> dict[str, object]:
    return {"name": "m", "provider": {"prometheus": {"address": address, "query": query}}, **extra}


async def test_instant_vector_scalar_and_special_values(
    shared: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient
) -> None:
    server, _ = shared
    clock = SystemClock()
    provider = PrometheusProvider(client, clock)
    vector = await provider.run(
        request_for(prom_metric(server.url, 'demo_ratio{hash="abc"}'), clock)
    )
    assert (vector.has_result, vector.result, vector.value) == (True, [0.02], "[0.02]")
    assert vector.metadata["ResolvedPrometheusQuery"] == 'demo_ratio{hash="abc"}'
    scalar = await provider.run(
        request_for(prom_metric(server.url, "scalar(sum(demo_ratio))"), clock)
    )
    assert (scalar.result, scalar.value) == (0.52, "0.52")
    nan = await provider.run(request_for(prom_metric(server.url, "demo_nan"), clock))
    assert math.isnan(nan.result[0]) and nan.value == "[NaN]"
    inf = await provider.run(request_for(prom_metric(server.url, "demo_inf"), clock))
    assert inf.result == [math.inf] and inf.value == "[+Inf]"


async def test_range_query_flattens_every_sample(
    shared: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient
) -> None:
    server, _ = shared
    await server.wait_for("count_over_time(demo_nan[10s])", lambda v: bool(v) and v[0] >= 3)
    clock = SystemClock()
    raw = prom_metric(server.url, 'demo_ratio{hash="def"}')
    raw["provider"]["prometheus"]["rangeQuery"] = {  # type: ignore[index]
        "start": 'now() - duration("3s")',
        "end": "now()",
        "step": "1s",
    }
    answer = await PrometheusProvider(client, clock).run(request_for(raw, clock))
    assert answer.has_result, answer.message
    assert len(answer.result) >= 3 and set(answer.result) == {0.5}


def test_range_time_expressions(clock: VirtualClock) -> None:
    now = clock.now()
    assert evaluate_time("now()", now) == now
    assert (now - evaluate_time('now() - duration("5m")', now)).total_seconds() == 300
    assert (evaluate_time("now() + duration('1h')", now) - now).total_seconds() == 3600


async def test_bad_query_is_an_error_naming_prometheus_answer(
    shared: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient
) -> None:
    server, _ = shared
    clock = SystemClock()
    answer = await PrometheusProvider(client, clock).run(
        request_for(prom_metric(server.url, "sum(demo_ratio"), clock)
    )
    assert answer.phase is MeasurementPhase.ERROR
    assert "HTTP 400" in answer.message


async def test_empty_result_fails_the_run_and_shows_the_query(
    shared: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient, tmp_path: Path
) -> None:
    server, _ = shared
    driver = RunDriver(tmp_path, SystemClock(), client)
    query = 'demo_ratio{hash="nosuchhash"}'
    driver.cluster.create(
        analysis_run(prom_metric(server.url, query, successCondition="len(result) == 0"))
    )
    assert await driver.step() is None
    (measurement,) = driver.measurements()
    assert measurement["phase"] == "Failed" and measurement["value"] == "[]"
    assert f"the query returned no data: {query}" in measurement["message"]
    assert driver.status()["phase"] == "Failed"
    driver.cluster.create(
        analysis_run(
            prom_metric(server.url, query, successCondition="len(result) == 0", onEmpty="Evaluate"),
            name="evaluate",
        )
    )
    await driver.step("evaluate")
    assert driver.status("evaluate")["phase"] == "Successful"
    driver.close()


@pytest.mark.parametrize(
    ("query", "condition", "shown"),
    [
        ("0/0", "result > 0.05", "NaN"),  # a scalar: an error ratio with no requests
        ("-1/0", "result > 0.05", "-Inf"),
        ("demo_nan", "result[0] > 0.05", "NaN"),  # a vector of one series
        ('demo_ratio{hash="abc"} or demo_nan', "result[0] > 0.05", "NaN"),  # one of several
        ("sum(demo_ratio) / 0", "result[0] < 0", "+Inf"),
    ],
)
async def test_non_finite_answers_are_errors_never_a_pass(
    shared: tuple[PrometheusServer, Exporter],
    client: httpx2.AsyncClient,
    tmp_path: Path,
    query: str,
    condition: str,
    shown: str,
) -> None:
    """Issue 16 item 3, against a real Prometheus: a lone failureCondition used to pass NaN."""
    server, _ = shared
    driver = RunDriver(tmp_path, SystemClock(), client)
    metric = prom_metric(server.url, query, failureCondition=condition, consecutiveErrorLimit=0)
    driver.cluster.create(analysis_run(metric))
    assert await driver.step() is None
    (measurement,) = driver.measurements()
    assert measurement["phase"] == "Error", measurement
    assert f"not a finite number ({shown})" in measurement["message"]
    assert driver.status()["phase"] == "Error"
    driver.close()


async def test_a_range_query_with_nan_samples_is_an_error(
    shared: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient, tmp_path: Path
) -> None:
    server, _ = shared
    await server.wait_for("count_over_time(demo_nan[10s])", lambda v: bool(v) and v[0] >= 3)
    raw = prom_metric(server.url, "demo_nan", failureCondition="result[0] > 0.05")
    raw["provider"]["prometheus"]["rangeQuery"] = {  # type: ignore[index]
        "start": 'now() - duration("3s")',
        "end": "now()",
        "step": "1s",
    }
    driver = RunDriver(tmp_path, SystemClock(), client)
    driver.cluster.create(analysis_run({**raw, "consecutiveErrorLimit": 0}))
    await driver.step()
    (measurement,) = driver.measurements()
    assert measurement["phase"] == "Error" and "not a finite number (NaN)" in measurement["message"]
    driver.close()


async def test_prometheus_stopped_mid_analysis_makes_the_run_inconclusive(
    scraped: tuple[PrometheusServer, Exporter], client: httpx2.AsyncClient, tmp_path: Path
) -> None:
    server, _ = scraped
    clock = VirtualClock()
    driver = RunDriver(tmp_path, clock, client)
    driver.cluster.create(
        analysis_run(
            prom_metric(
                server.url,
                'demo_ratio{hash="abc"}',
                interval="30s",
                count=3,
                successCondition="result[0] < 0.05",
            )
        )
    )
    assert await driver.step() == 30.0
    assert driver.measurements()[0]["phase"] == "Successful"
    server.stop()
    clock.advance(30)
    assert await driver.step() is None
    second = driver.measurements()[1]
    assert second["phase"] == "Inconclusive"
    assert f"Prometheus at {server.url} could not be reached" in second["message"]
    assert driver.status()["phase"] == "Inconclusive"
    driver.close()
