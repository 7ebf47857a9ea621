"""Non-finite measurements are not evidence (issue 16, item 3): the verdict and the field.

`NaN > 0.05` is false, so a metric with only `failureCondition: result > 0.05` passed a
Prometheus `0/0`. Headway decides a non-finite value before the conditions, by the metric's
`onNonFinite` (Error unless the metric opts in)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from headway.analysis.measurement import (
    MeasurementPhase,
    compile_metric_conditions,
    measurement_outcome,
)
from headway.analysis.verdict import headway_outcome, non_finite_numbers
from headway.model.analysis import parse_analysis_template
from headway.model.yamlload import load_documents

FAILURE_ONLY = compile_metric_conditions("errors", failure_condition="result > 0.05")
FAILURE_ONLY_VECTOR = compile_metric_conditions("errors", failure_condition="result[0] > 0.05")

NON_FINITE_RESULTS: list[tuple[Any, str]] = [
    (math.nan, "NaN"),  # a scalar 0/0
    (-math.inf, "-Inf"),
    (math.inf, "+Inf"),
    ([math.nan], "NaN"),  # a vector of one series
    ([0.01, math.nan], "NaN"),  # one series of several
    ({"ratio": [math.inf]}, "+Inf"),  # nested in a web answer
    ("NaN", "NaN"),  # text a condition could read as a number
    ("-Infinity", "-Infinity"),
]


@pytest.mark.parametrize(("result", "shown"), NON_FINITE_RESULTS)
def test_non_finite_values_are_an_error_not_a_pass(result: Any, shown: str) -> None:
    conditions = FAILURE_ONLY_VECTOR if isinstance(result, list) else FAILURE_ONLY
    outcome = headway_outcome(conditions, result, on_empty=None, query="sum(a)/sum(b)")
    assert outcome.phase is MeasurementPhase.ERROR, outcome
    assert f"not a finite number ({shown})" in outcome.message
    assert "sum(a)/sum(b)" in outcome.message and "onNonFinite" in outcome.message


@pytest.mark.parametrize("result", [math.nan, -math.inf, [math.nan], [0.01, math.nan]])
def test_the_reported_case_passed_the_conditions_alone(result: Any) -> None:
    """What the conditions alone (Argo's reading) make of it: Successful — the defect."""
    conditions = FAILURE_ONLY_VECTOR if isinstance(result, list) else FAILURE_ONLY
    assert measurement_outcome(conditions, result).phase is MeasurementPhase.SUCCESSFUL
    outcome = headway_outcome(conditions, result, on_empty=None, query="q")
    assert outcome.phase is MeasurementPhase.ERROR


@pytest.mark.parametrize(
    ("mode", "phase"),
    [
        ("Error", MeasurementPhase.ERROR),
        ("Failed", MeasurementPhase.FAILED),
        ("Inconclusive", MeasurementPhase.INCONCLUSIVE),
        ("Evaluate", MeasurementPhase.SUCCESSFUL),  # Argo's reading: NaN > 0.05 is false
    ],
)
def test_on_non_finite_chooses_the_phase(mode: str, phase: MeasurementPhase) -> None:
    outcome = headway_outcome(FAILURE_ONLY, math.nan, on_empty=None, query="q", on_non_finite=mode)
    assert outcome.phase is phase


def test_finite_values_go_to_the_conditions() -> None:
    assert non_finite_numbers([0.01, 2, {"a": "text", "b": 1e308}, True, None]) == []
    outcome = headway_outcome(FAILURE_ONLY_VECTOR, [0.2], on_empty=None, query="q")
    assert outcome.phase is MeasurementPhase.FAILED
    outcome = headway_outcome(FAILURE_ONLY_VECTOR, [0.01], on_empty=None, query="q")
    assert outcome.phase is MeasurementPhase.SUCCESSFUL


TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
  - name: m
    onNonFinite: %s
    provider: {prometheus: {address: "http://p:9090", query: up}}
"""


def test_on_non_finite_is_a_known_field_and_a_typo_names_it() -> None:
    for value in ("Error", "Failed", "Inconclusive", "Evaluate"):
        (document,) = load_documents(TEMPLATE % value, "t.yaml").documents
        template, diagnostics = parse_analysis_template(document)
        assert template is not None and not diagnostics
        assert template.spec.metrics[0].on_non_finite == value
    (document,) = load_documents(TEMPLATE % "Ignore", "t.yaml").documents
    template, diagnostics = parse_analysis_template(document)
    assert template is None
    assert [str(d) for d in diagnostics] == [
        't.yaml:7: AnalysisTemplate/t: spec.metrics[0].onNonFinite: string "Ignore" is not one '
        "of: Error, Failed, Inconclusive, Evaluate"
    ]
