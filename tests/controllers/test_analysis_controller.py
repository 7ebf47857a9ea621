"""The analysis controller on a virtual clock with a scripted provider: exact times, limits,
dryRun, terminate, retention, the empty-result rule, and a restart in the middle of a run."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from analysis_fakes import (
    ERROR,
    PENDING_JOB,
    RAISE,
    UNREACHABLE,
    Harness,
    analysis_run,
    harness,
    metric,
)

from headway.clock import EPOCH, VirtualClock
from headway.kubetime import format_time

MakeHarness = Callable[[list[object]], Harness]


@pytest.fixture
def make(tmp_path: Path, clock: VirtualClock) -> Iterator[MakeHarness]:
    made: list[Generator[Harness]] = []

    def start(script: list[object]) -> Harness:
        made.append(harness(tmp_path, clock, script))
        return next(made[-1])

    yield start
    for gen in made:
        gen.close()


def at(seconds: float) -> str:
    return format_time(EPOCH + timedelta(seconds=seconds))


async def test_measurements_come_at_exact_interval_times_until_count(make: MakeHarness) -> None:
    h = make([[0.01], [0.02], [0.03]])
    h.create(analysis_run(metric(interval="10s", count=3, successCondition="result[0] < 0.05")))
    waits = await h.run_until_done()
    assert waits == [10.0, 10.0]
    assert [t for t, _ in h.provider.runs] == [EPOCH + timedelta(seconds=s) for s in (0, 10, 20)]
    status = h.status()
    assert status["phase"] == "Successful"
    assert status["startedAt"] == at(0)
    result = h.result()
    assert (result["phase"], result["count"], result["successful"]) == ("Successful", 3, 3)
    assert [m["value"] for m in result["measurements"]] == ["[0.01]", "[0.02]", "[0.03]"]
    assert [m["startedAt"] for m in result["measurements"]] == [at(0), at(10), at(20)]
    assert status["runSummary"] == {
        "count": 1,
        "successful": 1,
        "failed": 0,
        "inconclusive": 0,
        "error": 0,
    }


async def test_initial_delay_defers_the_first_measurement(make: MakeHarness) -> None:
    h = make([[1]])
    h.create(analysis_run(metric(initialDelay="30s")))
    assert await h.step() == 30.0
    assert h.provider.runs == []
    h.clock.advance(29)
    assert await h.step() == 1.0
    h.clock.advance(1)
    assert await h.step() is None
    assert [t for t, _ in h.provider.runs] == [EPOCH + timedelta(seconds=30)]
    assert h.status()["phase"] == "Successful"


async def test_a_start_between_seconds_still_waits_the_whole_initial_delay(
    make: MakeHarness,
) -> None:
    """The run's start is stored with its fraction: truncated to the second, the first
    measurement would come 0.75 s before `initialDelay` has passed (on real traffic, before
    the new revision served anything, so an empty result failing the run)."""
    h = make([[1]])
    h.clock.advance(0.75)
    h.create(analysis_run(metric(initialDelay="2s")))
    assert await h.step() == 2.0
    h.clock.advance(1.5)
    assert await h.step() == pytest.approx(0.5)
    assert h.provider.runs == []
    h.clock.advance(0.5)
    assert await h.step() is None
    assert [t for t, _ in h.provider.runs] == [EPOCH + timedelta(seconds=2.75)]
    assert h.status()["startedAt"] == "2026-01-01T00:00:00.750000Z"


async def test_failure_limit_fails_the_run_on_the_measurement_past_it(make: MakeHarness) -> None:
    h = make([[0.5], [0.01], [0.6], [0.01]])
    h.create(
        analysis_run(
            metric(interval="5s", count=4, failureLimit=1, successCondition="result[0] < 0.1")
        )
    )
    await h.run_until_done()
    status = h.status()
    assert status["phase"] == "Failed"
    assert len(h.provider.runs) == 3, "no measurement after the run failed"
    assert 'metric "m" assessed Failed: failed (2) > failureLimit (1)' in status["message"]
    assert "[0.6]" in status["message"]


async def test_neither_condition_true_is_inconclusive(make: MakeHarness) -> None:
    h = make([[0.07]])
    h.create(
        analysis_run(
            metric(successCondition="result[0] < 0.05", failureCondition="result[0] > 0.1")
        )
    )
    assert await h.step() is None
    assert h.status()["phase"] == "Inconclusive"
    assert h.result()["inconclusive"] == 1


async def test_errors_retry_after_ten_seconds_until_the_consecutive_error_limit(
    make: MakeHarness,
) -> None:
    h = make([ERROR, ERROR, ERROR])
    h.create(analysis_run(metric(interval="1m", consecutiveErrorLimit=2)))
    waits = await h.run_until_done()
    assert waits == [10.0, 10.0]
    result = h.result()
    assert (result["error"], result["consecutiveError"], result["phase"]) == (3, 3, "Error")
    assert h.status()["phase"] == "Error"


async def test_dry_run_metric_never_decides_the_run(make: MakeHarness) -> None:
    h = make([[0.9], [0.9]])
    h.create(
        analysis_run(
            metric("real", successCondition="result[0] > 0.5"),
            metric("trial", successCondition="result[0] < 0.5"),
            dryRun=[{"metricName": "trial"}],
        )
    )
    assert await h.step() is None
    status = h.status()
    assert status["phase"] == "Successful"
    assert h.result("trial")["phase"] == "Failed" and h.result("trial")["dryRun"] is True
    assert status["dryRunSummary"]["failed"] == 1
    assert status["runSummary"]["count"] == 1


async def test_terminate_ends_an_unbounded_metric_successfully(make: MakeHarness) -> None:
    h = make([[1], [1]])
    h.create(analysis_run(metric(interval="10s", successCondition="result[0] == 1")))
    assert await h.step() == 10.0
    h.clock.advance(10)
    assert await h.step() == 10.0
    live = h.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")
    live["spec"]["terminate"] = True
    h.cluster.update(live)
    h.clock.advance(3)
    assert await h.step() is None
    assert len(h.provider.runs) == 2
    assert h.status()["phase"] == "Successful"
    assert h.result()["count"] == 2


async def test_terminate_before_any_measurement_is_not_a_pass(make: MakeHarness) -> None:
    h = make([])
    h.create(analysis_run(metric(initialDelay="1m", interval="10s"), terminate=True))
    assert await h.step() is None
    assert h.status()["phase"] == "Inconclusive"  # Headway: no evidence is not Successful


async def test_a_restarted_controller_continues_without_repeating_or_losing(
    make: MakeHarness,
) -> None:
    h = make([[1], [2], [3]])
    h.create(analysis_run(metric(interval="10s", count=3)))
    assert await h.step() == 10.0  # t=0
    h.clock.advance(4)
    assert await h.step() == 6.0  # t=4, a new controller instance: nothing is due
    h.clock.advance(6)
    assert await h.step() == 10.0  # t=10
    h.clock.advance(10)
    assert await h.step() is None  # t=20
    assert [t for t, _ in h.provider.runs] == [EPOCH + timedelta(seconds=s) for s in (0, 10, 20)]
    assert [m["value"] for m in h.result()["measurements"]] == ["[1]", "[2]", "[3]"]


async def test_measurement_retention_trims_history_but_not_counters(make: MakeHarness) -> None:
    h = make([[1]] * 5)
    h.create(
        analysis_run(
            metric(interval="1s", count=5), measurementRetention=[{"metricName": "m", "limit": 2}]
        )
    )
    await h.run_until_done()
    result = h.result()
    assert result["count"] == 5 and len(result["measurements"]) == 2
    assert [m["startedAt"] for m in result["measurements"]] == [at(3), at(4)]
    assert h.provider.gc_limits == [2] * 5


async def test_empty_result_fails_and_names_the_query(make: MakeHarness) -> None:
    h = make([[]])
    h.create(analysis_run(metric(query="sum(up{job='x'})", successCondition="len(result) == 0")))
    await h.step()
    measurement = h.result()["measurements"][0]
    assert measurement["phase"] == "Failed"
    assert "the query returned no data: sum(up{job='x'})" in measurement["message"]
    assert h.status()["phase"] == "Failed"


@pytest.mark.parametrize(
    ("on_empty", "phase"), [("Evaluate", "Successful"), ("Inconclusive", "Inconclusive")]
)
async def test_on_empty_opts_out_of_failing(make: MakeHarness, on_empty: str, phase: str) -> None:
    h = make([[]])
    h.create(analysis_run(metric(onEmpty=on_empty, successCondition="len(result) == 0")))
    await h.step()
    assert h.result()["measurements"][0]["phase"] == phase
    assert h.status()["phase"] == phase


async def test_unreachable_backend_makes_the_run_inconclusive(make: MakeHarness) -> None:
    h = make([UNREACHABLE])
    h.create(analysis_run(metric(interval="10s", count=3, successCondition="result[0] < 1")))
    assert await h.step() is None
    status = h.status()
    assert status["phase"] == "Inconclusive"
    assert "could not be reached" in status["message"]


async def test_args_are_substituted_before_the_provider_sees_the_metric(make: MakeHarness) -> None:
    h = make([[1]])
    h.create(
        analysis_run(
            metric(query="rate(x{hash='{{args.canary-hash}}'}[1m])"),
            args=[{"name": "canary-hash", "value": "abc123"}],
        )
    )
    await h.step()
    plugin = h.provider.runs[0][1].metric.provider.plugin or {}
    assert plugin["fake"]["query"] == "rate(x{hash='abc123'}[1m])"


async def test_an_unresolved_arg_or_unknown_provider_ends_the_run_in_error(
    make: MakeHarness,
) -> None:
    h = make([])
    h.create(analysis_run(metric(query="{{args.missing}}"), name="noarg"))
    assert await h.step("noarg") is None
    assert h.status("noarg")["phase"] == "Error"
    assert "args.missing is used but has no value" in h.status("noarg")["message"]
    h.create(
        analysis_run({"name": "m", "provider": {"datadog": {"query": "avg:x"}}}, name="datadog")
    )
    await h.step("datadog")
    assert h.status("datadog")["phase"] == "Error"
    assert "not supported by Headway" in h.status("datadog")["message"]
    assert h.provider.runs == []


async def test_an_in_flight_measurement_is_resumed_until_done(make: MakeHarness) -> None:
    h = make([PENDING_JOB])
    h.provider.job_polls_before_done = 2
    h.create(analysis_run(metric()))
    waits = await h.run_until_done()
    assert waits == [0.0, 5.0, 5.0]
    assert h.provider.resumes == [EPOCH + timedelta(seconds=s) for s in (0, 5, 10)]
    measurement = h.result()["measurements"][0]
    assert measurement["phase"] == "Successful"
    assert measurement["metadata"] == {"job-name": "j"}
    assert h.status()["phase"] == "Successful"


async def test_a_failed_metric_terminates_another_metric_in_flight(make: MakeHarness) -> None:
    h = make([PENDING_JOB, [0.9]])
    h.provider.job_polls_before_done = 10
    h.create(analysis_run(metric("job"), metric("rate", successCondition="result[0] < 0.5")))
    assert await h.step() is None
    assert h.provider.terminated == [EPOCH]
    assert h.status()["phase"] == "Failed"
    assert h.result("job")["measurements"][0]["message"].endswith("metric terminated")


async def test_a_step_with_nothing_due_writes_nothing(make: MakeHarness) -> None:
    h = make([[1]])
    h.create(analysis_run(metric(interval="10s", count=2)))
    await h.step()
    version = h.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")["metadata"][
        "resourceVersion"
    ]
    h.clock.advance(5)
    assert await h.step() == 5.0
    again = h.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")
    assert again["metadata"]["resourceVersion"] == version


async def test_a_provider_that_raises_records_an_error_measurement(make: MakeHarness) -> None:
    h = make([RAISE, [1]])
    h.create(analysis_run(metric(interval="1m", count=1)))
    assert await h.step() == 10.0  # an Error: retried after 10 s
    first = h.result()["measurements"][0]
    assert first["phase"] == "Error"
    assert "the provider failed: RuntimeError: provider bug" in first["message"]
    h.clock.advance(10)
    assert await h.step() is None
    assert h.status()["phase"] == "Successful"


async def test_non_finite_values_never_pass_a_failure_only_condition(make: MakeHarness) -> None:
    """Issue 16 item 3: a run measuring NaN / -Inf again and again ends in Error."""
    nan, minus_inf = float("nan"), float("-inf")
    h = make([[nan], [minus_inf], [0.01, nan], [nan], [nan]])
    h.create(analysis_run(metric(interval="10s", failureCondition="result[0] > 0.05")))
    await h.run_until_done()
    result = h.result()
    assert [m["phase"] for m in result["measurements"]] == ["Error"] * 5
    values = [m["value"] for m in result["measurements"][:3]]
    assert values == ["[NaN]", "[-Infinity]", "[0.01,NaN]"]
    assert "not a finite number (NaN)" in result["measurements"][0]["message"]
    assert h.status()["phase"] == "Error"


async def test_a_finite_value_after_a_nan_is_evidence_again(make: MakeHarness) -> None:
    h = make([[float("nan")], [0.01]])
    h.create(analysis_run(metric(interval="10s", count=1, failureCondition="result[0] > 0.05")))
    await h.run_until_done()
    assert [m["phase"] for m in h.result()["measurements"]] == ["Error", "Successful"]
    assert h.status()["phase"] == "Successful"


async def test_on_non_finite_evaluate_restores_argos_reading(make: MakeHarness) -> None:
    h = make([[float("nan")]])
    h.create(analysis_run(metric(onNonFinite="Evaluate", failureCondition="result[0] > 0.05")))
    await h.step()
    assert h.status()["phase"] == "Successful"
