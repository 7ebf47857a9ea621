"""One measurement's outcome, rule by rule, as Argo Rollouts' EvaluateResult decides it."""

from __future__ import annotations

from typing import Any

import pytest

from headway.analysis.measurement import (
    MeasurementPhase,
    compile_metric_conditions,
    measurement_outcome,
)

S, F, INC, E = (
    MeasurementPhase.SUCCESSFUL,
    MeasurementPhase.FAILED,
    MeasurementPhase.INCONCLUSIVE,
    MeasurementPhase.ERROR,
)

LOW = "result[0] < 0.02"
HIGH = "result[0] >= 0.05"

# (successCondition, failureCondition, result, phase)
RULES: list[tuple[str, str, Any, MeasurementPhase]] = [
    ("", "", [0.5], S),  # no conditions: always Successful
    ("", "", [], S),  # ... even with no data, as Argo does
    (LOW, "", [0.01], S),  # only success: true -> Successful
    (LOW, "", [0.03], F),  # only success: false -> Failed
    ("", HIGH, [0.06], F),  # only failure: true -> Failed
    ("", HIGH, [0.03], S),  # only failure: false -> Successful
    (LOW, HIGH, [0.01], S),  # both: success true
    (LOW, HIGH, [0.06], F),  # both: failure true
    (LOW, HIGH, [0.03], INC),  # both: neither true -> Inconclusive
    ("true", "true", [1], F),  # both true: failure wins
    (LOW, "", [], E),  # evaluation error -> Error
    ("", HIGH, None, E),
    (LOW, HIGH, [float("nan")], INC),  # NaN compares false both ways
    ("result[0]", "", [1], E),  # a non-bool is an Error
    ("", "'yes'", [1], E),
    ("result[0] <", "", [1], E),  # a syntax error is an Error
    (LOW, "result[0] >", [0.01], E),  # ... in either condition
    ("len(result) > 0 && result[0] < 0.01", "", [], F),  # the seed's empty-safe condition
    ("len(result) > 0 && result[0] < 0.01", "", [0.005], S),
    ("default(result[0], 0) < 0.8", "", [], E),  # default() cannot rescue result[0] on []
    ("default(result, 0) < 0.8", "", None, S),  # Argo's documented use for a nil scalar
    ("isNaN(result) || result >= 0.95", "", float("nan"), S),
]


@pytest.mark.parametrize(("success", "failure", "result", "phase"), RULES)
def test_outcome_rules(success: str, failure: str, result: Any, phase: MeasurementPhase) -> None:
    conditions = compile_metric_conditions(
        "m", success_condition=success, failure_condition=failure
    )
    assert measurement_outcome(conditions, result).phase is phase


def test_messages_name_the_metric_the_condition_and_the_value() -> None:
    conditions = compile_metric_conditions(
        "error-rate", success_condition="result[0] < 0.02", failure_condition="result[0] >= 0.02"
    )
    assert measurement_outcome(conditions, [0.31]).message == (
        'metric "error-rate": failureCondition "result[0] >= 0.02" was true for result [0.31]'
    )
    assert measurement_outcome(conditions, [0.01]).message == (
        'metric "error-rate": successCondition "result[0] < 0.02" was true for result [0.01]'
    )


def test_an_inconclusive_message_names_both_conditions() -> None:
    conditions = compile_metric_conditions(
        "lat", success_condition="result < 1", failure_condition="result > 2"
    )
    assert measurement_outcome(conditions, 1.5).message == (
        'metric "lat": neither successCondition "result < 1" nor failureCondition "result > 2" '
        "was true for result 1.5"
    )


def test_an_error_on_empty_data_says_the_metric_returned_nothing() -> None:
    conditions = compile_metric_conditions("m", success_condition="result[0] < 0.02")
    message = measurement_outcome(conditions, []).message
    assert message.startswith('metric "m": could not evaluate successCondition "result[0] < 0.02"')
    assert "no data" in message
    assert "result[0]: index 0 out of range (array length is 0)" in message


def test_a_non_bool_result_says_what_it_gave() -> None:
    conditions = compile_metric_conditions("m", failure_condition="result[0] * 2")
    outcome = measurement_outcome(conditions, [0.25])
    assert outcome.message == (
        'metric "m": failureCondition "result[0] * 2" gave 0.5 for result [0.25], '
        "but a condition must give true or false"
    )


def test_a_syntax_error_keeps_its_caret() -> None:
    conditions = compile_metric_conditions("m", success_condition="result[0] <")
    outcome = measurement_outcome(conditions, [1])
    assert outcome.phase is E
    assert outcome.message.splitlines()[-2:] == ["result[0] <", " " * 11 + "^"]


def test_the_success_condition_error_is_reported_first_as_in_argo() -> None:
    conditions = compile_metric_conditions(
        "m", success_condition="missing > 1", failure_condition="result >"
    )
    assert "successCondition" in measurement_outcome(conditions, [1]).message
