"""A routed canary judged through a REAL Prometheus (Debian's) scraping the local runtime's
runtime-wide /metrics: a bad canary aborted on its error ratio scoped by
`rollouts_pod_template_hash`, an empty result failing the measurement, and Prometheus stopped
mid-analysis pausing the rollout (never promoting on missing evidence)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import (
    analysis_step,
    canary_mesh,
    prometheus_metric,
    rollout,
    routed_canary,
    template,
)
from e2e_rollouts.stage import FIRST_DEPLOY, Stage, request_versions, vector_value
from e2e_rollouts.test_canary_traffic import settled
from headway.steering import rollouts as rollouts_actions
from prometheus_support import PrometheusServer, StartPrometheus

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]

CANARY = 'rollouts_pod_template_hash="{{args.canary-hash}}"'
ERROR_RATIO = (
    f'(sum(headway_requests_total{{{CANARY},code=~"5.."}}) or vector(0))'
    f" / sum(headway_requests_total{{{CANARY}}})"
)
MISSING = f"sum(headway_no_such_metric_total{{{CANARY}}})"
STEPS = [{"setWeight": 20}, analysis_step("errors"), {"setWeight": 60}]


def _metric(address: str, query: str, **schedule: Any) -> dict[str, Any]:
    return prometheus_metric(
        "error-ratio",
        address,
        query,
        successCondition="result[0] < 0.05",
        initialDelay="2s",
        interval="2s",
        failureLimit=0,
        **schedule,
    )


def _metrics_target(stage: Stage) -> tuple[str, int]:
    """The runtime-wide /metrics endpoint's host and port, for Prometheus to scrape."""
    host, port = str(stage.runtime.mesh.metrics_address if stage.runtime.mesh else "").split(":")
    return host, int(port)


async def _start(
    stage: Stage, prometheus: StartPrometheus, query: str, **schedule: Any
) -> tuple[PrometheusServer, str]:
    """v1 Healthy, traffic flowing, and a Prometheus scraping the runtime's /metrics."""
    server = prometheus([_metrics_target(stage)])
    stage.apply(
        template("errors", _metric(server.url, query, **schedule)),
        *canary_mesh(),
        rollout("v1", routed_canary(STEPS)),
    )
    await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
    address = str(await stage.until(stage.vs_address, 10, "the mesh address"))
    stage.send_traffic(address)
    await server.wait_for("sum(headway_requests_total)", lambda v: bool(v) and v[0] > 0)
    return server, address


def _measurements(stage: Stage) -> list[dict[str, Any]]:
    runs = stage.analysis_runs()
    if not runs:
        return []
    results = (runs[-1].get("status") or {}).get("metricResults") or [{}]
    return list(results[0].get("measurements") or [])


async def test_a_bad_canary_is_aborted_through_a_real_prometheus(
    tmp_path: Path, prometheus: StartPrometheus
) -> None:
    async with Stage.open(tmp_path) as stage:
        _, address = await _start(stage, prometheus, ERROR_RATIO, count=3)
        stage.apply(rollout("v2", routed_canary(STEPS), env={"ERROR_RATE": "0.5"}))
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 40, "the abort")
        (run,) = stage.analysis_runs()
        assert run["status"]["phase"] == "Failed"
        measured = run["status"]["metricResults"][0]["measurements"][-1]
        assert measured["phase"] == "Failed"
        # v2's 500s as Prometheus saw them: a real ratio, not an empty result. Its size is a
        # sample of v2's random failures (probability 0.5 each), so it is not pinned.
        ratio = vector_value(measured["value"])
        assert ratio is not None and 0 < ratio <= 1, measured
        message = stage.rollout_status()["message"]
        assert run["metadata"]["name"] in message and "error-ratio" in message, message
        assert stage.vs_weights() == [100, 0]
        await settled(address, {"v1"})


async def test_an_empty_prometheus_result_fails_the_measurement(
    tmp_path: Path, prometheus: StartPrometheus
) -> None:
    async with Stage.open(tmp_path) as stage:
        await _start(stage, prometheus, MISSING, count=2)
        stage.apply(rollout("v2", routed_canary(STEPS)))  # a good release: only no-data fails
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 40, "the abort")
        (run,) = stage.analysis_runs()
        measured = run["status"]["metricResults"][0]["measurements"][0]
        assert measured["phase"] == "Failed"
        assert "returned no data" in measured["message"], measured
        canary = stage.rollout_status()["currentPodHash"]
        assert (
            f'headway_no_such_metric_total{{rollouts_pod_template_hash="{canary}"}}'
            in (measured["message"])
        )
        assert stage.vs_weights() == [100, 0]


async def test_prometheus_stopped_mid_analysis_pauses_the_rollout(
    tmp_path: Path, prometheus: StartPrometheus
) -> None:
    async with Stage.open(tmp_path) as stage:
        server, address = await _start(stage, prometheus, ERROR_RATIO, count=5)
        stage.apply(rollout("v2", routed_canary(STEPS)))
        await stage.until(lambda: len(_measurements(stage)) >= 1, 40, "a first measurement")
        assert _measurements(stage)[0]["phase"] == "Successful"
        server.stop()  # the backend goes away while the run still needs measurements
        await stage.until(lambda: stage.rollout_phase() == "Paused", 20, "the pause")
        (run,) = stage.analysis_runs()
        assert run["status"]["phase"] == "Inconclusive"
        assert _measurements(stage)[-1]["phase"] == "Inconclusive"
        assert "could not be reached" in _measurements(stage)[-1]["message"]
        status = stage.rollout_status()
        reasons = [c["reason"] for c in status.get("pauseConditions") or []]
        assert reasons == ["InconclusiveAnalysis"], status
        paused = (status["currentStepIndex"], status["stableRS"], stage.vs_weights())
        assert paused[0] == 1 and paused[2] == [80, 20]
        # The Rollout controller looks again (the stage resyncs every 5 s) and still does not
        # promote on missing evidence.
        looked = stage.steps["rollouts"]
        await stage.until(lambda: stage.steps["rollouts"] >= looked + 2, 30, "two more looks")
        status = stage.rollout_status()
        assert (status["currentStepIndex"], status["stableRS"], stage.vs_weights()) == paused
        assert status["phase"] == "Paused"
        assert [r["metadata"]["uid"] for r in stage.analysis_runs()] == [run["metadata"]["uid"]]
        assert {"v1", "v2"} == set((await request_versions(address, 20)).keys())
        # The operator brings a Prometheus back (on a new address) and promotes: the analysis
        # runs again, as a new run, and this time the evidence lets the rollout finish.
        again = prometheus([_metrics_target(stage)])
        stage.apply(template("errors", _metric(again.url, ERROR_RATIO, count=2)))
        await again.wait_for("sum(headway_requests_total)", lambda v: bool(v) and v[0] > 0)
        rollouts_actions.promote(stage.cluster, "default", "web")
        await stage.until(lambda: stage.rollout_phase() == "Healthy", 40, "v2 Healthy")
        first, second = stage.analysis_runs()
        assert first["metadata"]["uid"] == run["metadata"]["uid"]
        assert first["status"]["phase"] == "Inconclusive"
        assert second["status"]["phase"] == "Successful"
