"""What a chart can draw from an AnalysisRun: numbers out of measured values, and a threshold
line out of a condition that compares `result` with one number (nothing out of the rest)."""

from __future__ import annotations

import pytest

from headway.dashboard.rollout_page import measured_value, threshold


@pytest.mark.parametrize(
    ("condition", "line"),
    [
        ("result < 0.05", 0.05),
        ("result[0] >= 0.95", 0.95),
        ("0.95 <= result[0]", 0.95),
        ("result[0] < 5e-2", 0.05),
        ("  result <= -1  ", -1.0),
        ("len(result) > 0 && result[0] < 0.05", None),
        ("result[1] < 0.05", None),
        ("result.status == 200", None),
        ("asFloat(result) < 0.05", None),
    ],
)
def test_threshold(condition: str, line: float | None) -> None:
    assert threshold(condition) == line


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("0.05", 0.05),
        ("[0.3]", 0.3),
        ("[0.3, 0.4]", 0.3),
        (7, 7.0),
        ("[]", None),
        ("true", None),
        (True, None),
        ('{"status": 200}', None),
        ("not json", None),
        (None, None),
    ],
)
def test_measured_value(value: object, number: float | None) -> None:
    assert measured_value(value) == number
