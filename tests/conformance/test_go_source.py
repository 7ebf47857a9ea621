"""Reading literal values out of Go test code, and refusing what is not a literal."""

from __future__ import annotations

import math
from typing import Any

import pytest

from headway.conformance.go_source import Cursor, Unreadable, parse_value, tokenize


def _value(text: str, names: dict[str, Any] | None = None) -> Any:
    return parse_value(Cursor(tokenize(text)), names or {})


@pytest.mark.parametrize(
    ("go", "value"),
    [
        ("true", True),
        ("nil", None),
        ("-3", -3),
        ("1.5e2", 150.0),
        ('"a\\"b"', 'a"b'),
        ("`raw\\n`", "raw\\n"),
        ("[]float64{1, 2.5}", [1.0, 2.5]),  # untyped 1 becomes a float64 in a []float64
        ("[]any{1, 2.5}", [1, 2.5]),
        ("[]int64{}", []),
        ("float64(5)", 5.0),
        ('map[string]any{"a": []any{float64(2)}, "b": nil}', {"a": [2.0], "b": None}),
        ('map[string]float64{"p99": 1}', {"p99": 1.0}),
        ('v1alpha1.Metric{SuccessCondition: "true"}', {"SuccessCondition": "true"}),
        ("v1alpha1.AnalysisPhaseInconclusive", "Inconclusive"),
        (
            "[]struct {\n in any\n want bool\n}{{1, true}, {in: 2, want: false}}",
            [{"in": 1, "want": True}, {"in": 2, "want": False}],
        ),
    ],
)
def test_literals_read_as_go_builds_them(go: str, value: Any) -> None:
    read = _value(go)
    assert read == value
    assert type(read) is type(value)


def test_names_bound_earlier_and_their_fields_resolve() -> None:
    names = {"row": {"input": "1.1"}, "limit": 3}
    assert _value("row.input", names) == "1.1"
    assert _value("limit", names) == 3


def test_math_constants() -> None:
    assert math.isnan(_value("math.NaN()"))
    assert _value("math.Inf(-1)") == -math.inf


@pytest.mark.parametrize(
    ("go", "problem"),
    [
        ("helper(1)", "a call of helper()"),
        ("someVariable", "unknown name someVariable"),
        ("row.missing", "no field missing"),
    ],
)
def test_what_is_not_a_literal_is_unreadable(go: str, problem: str) -> None:
    with pytest.raises(Unreadable, match=problem):
        _value(go, {"row": {}})
