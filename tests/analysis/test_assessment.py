"""Metric and run phases against Argo Rollouts' limits, and Headway's two safety rules."""

# ruff: noqa: E501  (the tables read best one case per line)

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from analysis.assessment_helpers import history
from headway.analysis.assessment import assess_metric, assess_run, worse
from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import ARGO_RULES, HEADWAY_RULES, MetricPolicy
from headway.analysis.results import MetricResult

P = MeasurementPhase
EVERY = timedelta(seconds=30)

# (policy fields, measured phases, terminating, Argo's phase, Headway's phase, reason fragment)
METRIC_TABLE: list[tuple[dict[str, object], str, bool, P, P, str]] = [
    ({}, "", False, P.PENDING, P.PENDING, ""),
    ({"count": 3, "interval": EVERY}, "SR", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 5, "interval": EVERY}, "F", False, P.FAILED, P.FAILED, "failed (1) > failureLimit (0)"),
    ({"count": 5, "interval": EVERY, "failure_limit": 1}, "SF", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 5, "interval": EVERY, "failure_limit": 1}, "FSF", False, P.FAILED, P.FAILED,
     "failed (2) > failureLimit (1)"),
    ({"count": 5, "interval": EVERY, "failure_limit": -1, "consecutive_success_limit": 2},
     "FFF", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 5, "interval": EVERY}, "I", False, P.INCONCLUSIVE, P.INCONCLUSIVE,
     "inconclusive (1) > inconclusiveLimit (0)"),
    ({"count": 5, "interval": EVERY, "inconclusive_limit": 1}, "SI", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 9, "interval": EVERY}, "EEEE", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 9, "interval": EVERY}, "EEEEE", False, P.ERROR, P.ERROR,
     "consecutiveErrors (5) > consecutiveErrorLimit (4)"),
    ({"count": 9, "interval": EVERY}, "EEESEEEE", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 9, "interval": EVERY, "consecutive_error_limit": 0}, "E", False, P.ERROR, P.ERROR,
     "consecutiveErrors (1) > consecutiveErrorLimit (0)"),
    ({"count": 9, "interval": EVERY, "consecutive_error_limit": 0}, "FE", False, P.ERROR, P.ERROR,
     "consecutiveErrors"),  # several limits broken: the error limit is checked last and wins
    ({"count": 9, "interval": EVERY}, "FI", False, P.INCONCLUSIVE, P.INCONCLUSIVE, "inconclusive"),
    ({"count": 3, "interval": EVERY}, "SSS", False, P.SUCCESSFUL, P.SUCCESSFUL, "count (3) reached"),
    ({"count": 3, "interval": EVERY, "failure_limit": 1}, "SFS", False, P.SUCCESSFUL,
     P.SUCCESSFUL, "count (3) reached"),
    ({"count": 3, "interval": EVERY}, "SESS", False, P.SUCCESSFUL, P.SUCCESSFUL, ""),
    ({}, "S", False, P.SUCCESSFUL, P.SUCCESSFUL, "count (1) reached"),
    ({}, "E", False, P.RUNNING, P.RUNNING, ""),  # an error is not a measurement toward count
    ({"interval": EVERY}, "SSSSSS", False, P.RUNNING, P.RUNNING, ""),
    ({"count": 9, "interval": EVERY, "consecutive_success_limit": 2}, "FSS", False, P.FAILED,
     P.FAILED, "failed (1)"),
    ({"count": 9, "interval": EVERY, "consecutive_success_limit": 2, "failure_limit": 1},
     "FSS", False, P.SUCCESSFUL, P.SUCCESSFUL, "consecutiveSuccessLimit (2) reached"),
    ({"count": 4, "interval": EVERY, "consecutive_success_limit": 3, "failure_limit": 2},
     "SFSS", False, P.INCONCLUSIVE, P.INCONCLUSIVE, "consecutiveSuccessLimit (3) not reached"),
    ({"count": 4, "interval": EVERY, "consecutive_success_limit": 3, "failure_limit": -1},
     "FFSS", False, P.FAILED, P.FAILED, "consecutiveSuccessLimit (3) not reached"),
    # Terminated runs: where Headway is deliberately stricter.
    ({"interval": EVERY}, "SS", True, P.SUCCESSFUL, P.SUCCESSFUL, "run terminated"),
    ({"interval": EVERY}, "", True, P.SUCCESSFUL, P.INCONCLUSIVE, ""),
    ({"count": 5, "interval": EVERY}, "SS", True, P.SUCCESSFUL, P.INCONCLUSIVE,
     "after 2 of 5 required measurements"),
    ({"count": 5, "interval": EVERY}, "EE", True, P.SUCCESSFUL, P.ERROR,
     "all 2 measurements were Errors"),
    ({"count": 5, "interval": EVERY}, "SSR", True, P.RUNNING, P.RUNNING, ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "phases", "terminating", "argo", "headway", "reason"), METRIC_TABLE
)
def test_metric_phase(
    fields: dict[str, object], phases: str, terminating: bool, argo: P, headway: P, reason: str
) -> None:
    policy = MetricPolicy("m", **fields)  # type: ignore[arg-type]
    result = history("m", phases) if phases else None
    got_argo = assess_metric(policy, result, terminating=terminating, rules=ARGO_RULES)
    got_headway = assess_metric(policy, result, terminating=terminating, rules=HEADWAY_RULES)
    assert (got_argo.phase, got_headway.phase) == (argo, headway)
    assert reason in got_headway.reason


def test_a_completed_metric_keeps_its_phase() -> None:
    result = MetricResult("m", phase=P.FAILED, message="earlier")
    assert assess_metric(MetricPolicy("m"), result).phase is P.FAILED


def test_worst_order_is_argos() -> None:
    order = [P.SUCCESSFUL, P.RUNNING, P.PENDING, P.INCONCLUSIVE, P.ERROR, P.FAILED]
    for better, worse_phase in itertools.pairwise(order):
        assert worse(better, worse_phase) and not worse(worse_phase, better)


ONCE = MetricPolicy("once")
LOOP = MetricPolicy("loop", interval=EVERY)
SHADOW = MetricPolicy("shadow", dry_run=True)

# (policies, histories, terminate, Argo run phase, Headway run phase)
RUN_TABLE: list[tuple[list[MetricPolicy], dict[str, str], bool, P, P]] = [
    ([ONCE], {"once": "S"}, False, P.SUCCESSFUL, P.SUCCESSFUL),
    ([ONCE], {}, False, P.RUNNING, P.RUNNING),
    ([ONCE, LOOP], {"once": "S", "loop": "SS"}, False, P.RUNNING, P.RUNNING),
    ([ONCE, LOOP], {"once": "F", "loop": "SS"}, False, P.FAILED, P.FAILED),
    ([ONCE, LOOP], {"once": "I", "loop": "SS"}, False, P.INCONCLUSIVE, P.INCONCLUSIVE),
    ([ONCE, MetricPolicy("bad", consecutive_error_limit=0)], {"once": "I", "bad": "E"}, False,
     P.ERROR, P.ERROR),
    ([MetricPolicy("a"), MetricPolicy("b", consecutive_error_limit=0)], {"a": "F", "b": "E"},
     False, P.FAILED, P.FAILED),
    ([ONCE, SHADOW], {"once": "S", "shadow": "F"}, False, P.SUCCESSFUL, P.SUCCESSFUL),
    ([LOOP, SHADOW], {"loop": "S", "shadow": "F"}, False, P.RUNNING, P.RUNNING),
    ([SHADOW], {"shadow": "F"}, False, P.SUCCESSFUL, P.SUCCESSFUL),
    ([LOOP], {"loop": "SSS"}, True, P.SUCCESSFUL, P.SUCCESSFUL),
    ([LOOP], {}, True, P.SUCCESSFUL, P.INCONCLUSIVE),
    ([MetricPolicy("x", count=3, interval=EVERY)], {"x": "EE"}, True, P.SUCCESSFUL, P.ERROR),
    ([ONCE, LOOP], {"once": "S", "loop": "EEE"}, True, P.SUCCESSFUL, P.ERROR),
]  # fmt: skip


@pytest.mark.parametrize(("policies", "phases", "terminate", "argo", "headway"), RUN_TABLE)
def test_run_phase(
    policies: list[MetricPolicy], phases: dict[str, str], terminate: bool, argo: P, headway: P
) -> None:
    results = {name: history(name, letters) for name, letters in phases.items()}
    assert assess_run(policies, results, terminate=terminate, rules=ARGO_RULES).phase is argo
    assert assess_run(policies, results, terminate=terminate).phase is headway


def test_run_message_names_the_worst_metric_and_its_last_measurement() -> None:
    results = {"once": history("once", "S"), "rate": history("rate", "SFF")}
    policies = [ONCE, MetricPolicy("rate", count=5, interval=EVERY, failure_limit=1)]
    assessment = assess_run(policies, results)
    assert assessment.phase is P.FAILED
    assert assessment.message == (
        'metric "rate" assessed Failed: failed (2) > failureLimit (1); last measurement: '
        "measurement 2"
    )


def test_summaries_count_metrics_and_keep_dry_run_apart() -> None:
    policies = [ONCE, MetricPolicy("two"), SHADOW]
    results = {
        "once": history("once", "S"),
        "two": history("two", "F"),
        "shadow": history("shadow", "F"),
    }
    assessment = assess_run(policies, results)
    assert (assessment.summary.count, assessment.summary.successful, assessment.summary.failed) == (
        2,
        1,
        1,
    )
    assert (assessment.dry_run_summary.count, assessment.dry_run_summary.failed) == (1, 1)
    assert [m.phase for m in assessment.metrics] == [P.SUCCESSFUL, P.FAILED, P.FAILED]
