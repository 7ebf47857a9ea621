"""Argo's measurement phases, decided by evaluating conditions with no data."""

from __future__ import annotations

import math

import pytest

from headway.check.empty_result import measurement_phase

EMPTY: list[object] = []
NAN_SAMPLE = [math.nan]


@pytest.mark.parametrize(
    ("success", "failure", "result", "phase"),
    [
        ("result[0] < 0.02", "", EMPTY, "Error"),  # index out of range is an error, not a pass
        ("result[0] < 0.02", "", NAN_SAMPLE, "Failed"),
        ("", "result[0] >= 0.02", NAN_SAMPLE, "Successful"),  # NaN >= x is false
        ("all(result, {# < 0.02})", "", EMPTY, "Successful"),  # vacuous truth
        ("len(result) == 0 || result[0] < 0.02", "", EMPTY, "Successful"),
        ("default(result, 0) < 5", "", None, "Successful"),
        ("len(result) > 0 && all(result, {# < 0.02})", "", EMPTY, "Failed"),
        ("len(result) > 0 && all(result, {# < 0.02})", "", NAN_SAMPLE, "Failed"),
        ("result[0] < 0.02", "result[0] >= 0.05", [0.03], "Inconclusive"),
        ("result[0] < 0.02", "result[0] >= 0.05", [0.01], "Successful"),
        ("result[0] < 0.02", "result[0] >= 0.05", [0.07], "Failed"),
        ("", "", EMPTY, "Successful"),
        ("result", "", [1], "Error"),  # not a boolean
    ],
)
def test_measurement_phase(success: str, failure: str, result: object, phase: str) -> None:
    assert measurement_phase(success, failure, result) == phase
