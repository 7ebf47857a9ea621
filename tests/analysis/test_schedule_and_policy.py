"""When measurements are due (virtual clock), retention, and policies read from a template."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analysis.assessment_helpers import START, history
from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import MetricPolicy, PolicyError, metric_policies
from headway.analysis.results import Measurement, MetricResult, record_measurement, retain
from headway.analysis.schedule import measurement_due, next_measurement_at, next_run_check_at
from headway.clock import VirtualClock
from headway.model.analysis import parse_analysis_run
from headway.model.yamlload import load_documents

SECOND = timedelta(seconds=1)
EVERY = timedelta(seconds=30)

# (policy, phases, terminating, due after START, or None for no more measurements)
SCHEDULE: list[tuple[MetricPolicy, str, bool, timedelta | None]] = [
    (MetricPolicy("m", interval=EVERY), "", False, timedelta(0)),
    (MetricPolicy("m", interval=EVERY, initial_delay=timedelta(minutes=2)), "", False,
     timedelta(minutes=2)),
    (MetricPolicy("m", interval=EVERY), "", True, None),
    (MetricPolicy("m", interval=EVERY), "S", False, SECOND + EVERY),
    (MetricPolicy("m", interval=EVERY), "SS", False, EVERY + SECOND + EVERY),
    (MetricPolicy("m", interval=EVERY), "SE", False, EVERY + SECOND + timedelta(seconds=10)),
    (MetricPolicy("m", interval=EVERY), "SR", False, EVERY),  # resume the in-flight one now
    (MetricPolicy("m", interval=EVERY), "SR", True, EVERY),  # ... also to terminate it
    (MetricPolicy("m", interval=EVERY), "S", True, None),
    (MetricPolicy("m", count=2, interval=EVERY), "SS", False, None),  # count reached
    (MetricPolicy("m", count=2, interval=EVERY), "SES", False, None),  # errors do not count
    (MetricPolicy("m"), "S", False, None),  # no count, no interval: one measurement
    (MetricPolicy("m"), "E", False, SECOND + timedelta(seconds=10)),  # retried after an error
]  # fmt: skip


@pytest.mark.parametrize(("policy", "phases", "terminating", "after"), SCHEDULE)
def test_next_measurement_time(
    policy: MetricPolicy, phases: str, terminating: bool, after: timedelta | None
) -> None:
    result = history("m", phases) if phases else None
    due = next_measurement_at(policy, result, run_started_at=START, terminating=terminating)
    assert due == (None if after is None else START + after)


def test_a_virtual_clock_decides_when_the_measurement_is_due() -> None:
    clock = VirtualClock(START)
    policy = MetricPolicy("m", interval=EVERY, initial_delay=timedelta(seconds=5))
    result: MetricResult | None = None
    taken = []
    for _ in range(100):  # 100 virtual seconds, one tick each
        if measurement_due(policy, result, run_started_at=START, now=clock.now()):
            measured = Measurement(MeasurementPhase.SUCCESSFUL, clock.now(), clock.now())
            result = record_measurement(result or MetricResult("m"), measured)
            taken.append(clock.now() - START)
        clock.advance(1)
    assert taken == [timedelta(seconds=s) for s in (5, 35, 65, 95)]


def test_the_run_is_checked_again_at_the_earliest_metric() -> None:
    policies = [
        MetricPolicy("slow", interval=timedelta(minutes=5)),
        MetricPolicy("fast", interval=EVERY),
    ]
    results = {"slow": history("slow", "S"), "fast": history("fast", "S")}
    assert next_run_check_at(policies, results, run_started_at=START) == START + SECOND + EVERY
    assert next_run_check_at(policies, results, run_started_at=START, terminating=True) is None


def test_retention_keeps_the_newest_measurements_and_every_counter() -> None:
    full = history("m", "SFSSESFS")
    kept = retain(full, 3)
    assert [m.message for m in kept.measurements] == [
        "measurement 5",
        "measurement 6",
        "measurement 7",
    ]
    assert (kept.count, kept.successful, kept.failed, kept.error) == (7, 5, 2, 1)
    assert (kept.consecutive_success, kept.consecutive_error) == (1, 0)
    assert retain(full, 0) is full


def test_a_resumed_measurement_replaces_the_in_flight_one() -> None:
    running = history("m", "SR")
    finished = record_measurement(
        running, Measurement(MeasurementPhase.FAILED, running.measurements[-1].started_at, START)
    )
    assert len(finished.measurements) == 2
    assert (finished.count, finished.failed) == (2, 1)


RUN = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisRun
metadata: {name: run}
spec:
  dryRun: [{metricName: "^shadow"}]
  measurementRetention: [{metricName: rate, limit: 3}]
  metrics:
  - name: error-rate
    interval: 1m
    count: "5"
    failureLimit: 1
    consecutiveErrorLimit: 2
    successCondition: result[0] < 0.01
    provider: {prometheus: {address: "http://p:9090", query: "x"}}
  - name: shadow-latency
    initialDelay: 30s
    provider: {prometheus: {address: "http://p:9090", query: "y"}}
"""


def _run_spec(text: str):  # type: ignore[no-untyped-def]
    run, diagnostics = parse_analysis_run(load_documents(text, "run.yaml").documents[0])
    assert run is not None, diagnostics
    return run.spec


def test_policies_come_from_a_run_with_argo_defaults() -> None:
    spec = _run_spec(RUN)
    rate, shadow = metric_policies(
        spec.metrics, dry_run=spec.dry_run, measurement_retention=spec.measurement_retention
    )
    assert rate == MetricPolicy(
        "error-rate", count=5, interval=timedelta(minutes=1), failure_limit=1,
        consecutive_error_limit=2, measurement_limit=3,
    )  # fmt: skip
    assert shadow == MetricPolicy(
        "shadow-latency", initial_delay=timedelta(seconds=30), dry_run=True
    )
    assert shadow.effective_count() == 1 and rate.effective_count() == 5
    assert MetricPolicy("m", interval=EVERY).effective_count() is None


def test_a_rule_that_matches_no_metric_is_an_error() -> None:
    spec = _run_spec(RUN.replace('"^shadow"', '"^nothing"'))
    with pytest.raises(PolicyError, match=r"dryRun\[0\]: rule '\^nothing' matches no metric"):
        metric_policies(spec.metrics, dry_run=spec.dry_run)


def test_an_unresolved_placeholder_is_an_error() -> None:
    spec = _run_spec(RUN.replace('count: "5"', 'count: "{{args.count}}"'))
    with pytest.raises(PolicyError, match=r"count '\{\{args.count\}\}' is not a number"):
        metric_policies(spec.metrics)
