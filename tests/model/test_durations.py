"""Argo duration parsing: Go duration strings, bare seconds where Argo allows them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.model import durations
from headway.model.durations import DurationError, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("2m", 120.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        ("500ms", 0.5),
        ("1m0.5s", 60.5),
        ("250us", 0.00025),
        ("250µs", 0.00025),
        ("10ns", 1e-8),
        ("0", 0.0),
        ("0s", 0.0),
        (".5m", 30.0),
        ("+3s", 3.0),
    ],
)
def test_go_duration_strings(text: str, seconds: float) -> None:
    assert parse_duration(text, bare_seconds=False) == pytest.approx(seconds)
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("value", "seconds"), [(30, 30.0), ("45", 45.0), (0, 0.0)])
def test_bare_integers_are_seconds_where_allowed(value: object, seconds: float) -> None:
    assert parse_duration(value, bare_seconds=True) == seconds


@pytest.mark.parametrize("value", [30, "45"])
def test_bare_integers_rejected_for_go_durations(value: object) -> None:
    with pytest.raises(DurationError, match="unit"):
        parse_duration(value, bare_seconds=False)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2 minutes", '"2 minutes" is not a duration'),
        ("5d", 'unknown unit "d"'),
        ("", '"" is not a duration'),
        ("h", '"h" is not a duration'),
        ("1h 30m", '"1h 30m" is not a duration'),
        ("-5s", "negative"),
        (-5, "negative"),
        (True, "True is not a duration"),
        (1.5, "1.5 is not a duration"),
        ([1], r"\[1\] is not a duration"),
    ],
)
def test_errors_say_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(DurationError, match=message):
        parse_duration(value)


@pytest.mark.parametrize(
    ("seconds", "text"), [(90, "1m30s"), (0.5, "500ms"), (0, "0s"), (3600, "1h"), (5, "5s")]
)
def test_format_duration_round_trips(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(text) == pytest.approx(seconds)


def _outcome(value: object, *, bare_seconds: bool, read: object) -> tuple[str, object]:
    try:
        return "seconds", read(value, bare_seconds=bare_seconds)  # type: ignore[operator]
    except DurationError as error:
        return "error", str(error)


@settings(max_examples=400)
@given(
    text=st.text(alphabet="0123456789.+- hmsuµμnd", max_size=8) | st.integers(-5, 90),
    bare_seconds=st.booleans(),
)
def test_a_remembered_text_reads_as_it_did_the_first_time(text: object, bare_seconds: bool) -> None:
    """Differential: the remembered answer (asked twice, the second from memory) is the
    parser's answer, seconds or error message alike; errors are never remembered."""
    expected = _outcome(text, bare_seconds=bare_seconds, read=durations._parse_value)
    for _ in range(2):
        assert _outcome(text, bare_seconds=bare_seconds, read=parse_duration) == expected
    if expected[0] == "error":
        assert (text, bare_seconds) not in durations._SECONDS_OF_TEXT


def test_the_same_text_means_a_different_thing_with_and_without_bare_seconds() -> None:
    assert parse_duration("45", bare_seconds=True) == 45.0
    with pytest.raises(DurationError, match="unit"):
        parse_duration("45", bare_seconds=False)
