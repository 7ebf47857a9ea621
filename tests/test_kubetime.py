"""Kubernetes timestamps: written as the API server writes them, read as Kubernetes emits them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from headway.kubetime import format_precise_time, format_time, parse_time


def test_a_time_is_written_in_utc_to_the_second_with_a_z() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC)
    assert format_time(when) == "2026-03-04T05:06:07Z"


def test_a_time_in_another_zone_is_written_as_the_same_moment_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 3, 4, 1, 0, 0, tzinfo=plus_two)) == "2026-03-03T23:00:00Z"


def test_a_naive_time_is_taken_as_utc_not_as_the_machine_s_local_time() -> None:
    assert format_time(datetime(2026, 3, 4, 5, 6, 7)) == "2026-03-04T05:06:07Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-04T05:06:07Z", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        # metav1.MicroTime and Go's RFC3339Nano: fractions of up to nine digits.
        ("2026-03-04T05:06:07.123456Z", datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)),
        ("2026-03-04T05:06:07.123456789Z", datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)),
        ("2026-03-04T05:06:07.5Z", datetime(2026, 3, 4, 5, 6, 7, 500000, tzinfo=UTC)),
        ("2026-03-04T07:06:07+02:00", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        ("2026-03-04t05:06:07z", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        ("2026-03-04T05:06:07", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
    ],
)
def test_what_kubernetes_emits_is_read_as_the_moment_it_names_in_utc(
    text: str, expected: datetime
) -> None:
    parsed = parse_time(text)
    assert parsed == expected
    assert parsed is not None and parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize("text", [None, "", 5, "yesterday", "2026-03-04", "2026-13-04T00:00:00Z"])
def test_what_is_not_a_timestamp_reads_as_none(text: object) -> None:
    assert parse_time(text) is None


def test_a_written_time_reads_back_as_the_same_second() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 999999, tzinfo=UTC)
    assert parse_time(format_time(when)) == when.replace(microsecond=0)


def test_a_precise_time_keeps_its_microseconds_and_reads_back_exactly() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 250000, tzinfo=UTC)
    assert format_precise_time(when) == "2026-03-04T05:06:07.250000Z"
    assert parse_time(format_precise_time(when)) == when


def test_a_precise_time_on_a_whole_second_reads_as_kubernetes_writes_it() -> None:
    assert format_precise_time(datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)) == "2026-03-04T05:06:07Z"
