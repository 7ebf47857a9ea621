"""Each deliberate difference from expr-lang / Argo Rollouts, pinned (docs/compatibility.md)."""

from __future__ import annotations

import pytest

from headway.analysis.measurement import (
    MeasurementPhase,
    compile_metric_conditions,
    measurement_outcome,
)
from headway.expr import EvaluationError, compile_condition


def test_division_by_zero_is_an_error_not_inf_or_nan() -> None:
    # expr-lang gives NaN for 0/0; `NaN > 0.05` is false, so a failure-only metric passed.
    conditions = compile_metric_conditions(
        "ratio", failure_condition="result.errors / result.total > 0.05"
    )
    outcome = measurement_outcome(conditions, {"errors": 0, "total": 0})
    assert outcome.phase is MeasurementPhase.ERROR
    assert "division by zero" in outcome.message


def test_integer_overflow_is_an_error_not_wrap_around() -> None:
    with pytest.raises(EvaluationError, match="integer overflow"):
        compile_condition("result * 2 > 0").evaluate({"result": 2**62})


def test_default_and_is_nil_look_at_their_argument() -> None:
    # Argo's default(x, f) ignores x and returns the whole result unless result is nil.
    env = {"result": {"p99": None, "rps": 12}}
    assert compile_condition("default(result.p99, 0)").evaluate(env) == 0
    assert compile_condition("default(result.rps, 0)").evaluate(env) == 12
    assert compile_condition("isNil(result.p99) && !isNil(result.rps)").evaluate(env) is True
    # For the documented form the answers are Argo's.
    assert compile_condition("default(result, 0)").evaluate({"result": None}) == 0
    assert compile_condition("default(result, 0)").evaluate({"result": 0.3}) == 0.3


def test_default_never_turns_an_empty_vector_into_a_pass() -> None:
    conditions = compile_metric_conditions("p99", success_condition="default(result[0], 0) < 0.8")
    assert measurement_outcome(conditions, []).phase is MeasurementPhase.ERROR


@pytest.mark.parametrize(
    ("failure_condition", "result"),
    [
        ('result == "0"', 0.5),  # Argo: a type error too (result is a float64 there)
        ('asFloat(result) == "1.1"', "1.1"),  # Argo: a type error too (asFloat gives float64)
        ("result.status == 500", {"status": "500"}),  # Argo: false (JSON values are untyped)
    ],
)
def test_comparing_different_types_is_an_error_so_a_lone_failure_condition_cannot_pass(
    failure_condition: str, result: object
) -> None:
    conditions = compile_metric_conditions("m", failure_condition=failure_condition)
    outcome = measurement_outcome(conditions, result)
    assert outcome.phase is MeasurementPhase.ERROR
    assert "mismatched types" in outcome.message


def test_bit_shift_out_of_64_bits_is_an_error_not_wrap_around() -> None:
    assert compile_condition("bitshl(1, 62)").evaluate({}) == 2**62
    with pytest.raises(EvaluationError, match="integer overflow"):
        compile_condition("bitshl(1, 63)").evaluate({})


def test_keys_and_values_follow_the_maps_order() -> None:
    # Go's map order is random per run; Headway lists a map in the order its JSON gave it.
    env = {"result": {"zeta": 1, "alpha": 2, "mid": 3}}
    assert compile_condition("keys(result)").evaluate(env) == ["zeta", "alpha", "mid"]
    assert compile_condition("values(result)").evaluate(env) == [1, 2, 3]
