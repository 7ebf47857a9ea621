"""Timestamps as Kubernetes writes and reads them: the one place Headway turns times into text.

The API server serialises `metav1.Time` as RFC 3339 in UTC with a `Z` and whole seconds
(`2026-01-01T00:00:05Z`), so every timestamp Headway writes into an object looks the same and
compares the same after a round trip. Reading is more lenient, because objects also come from
other writers: fractional seconds (`metav1.MicroTime`, Go's `RFC3339Nano`), numeric offsets
and a lower-case `t`/`z` are accepted; a time without an offset is taken as UTC.

`format_precise_time` keeps microseconds (as `metav1.MicroTime` does) for the one status that
schedules from its own timestamps, an AnalysisRun's: truncating its start to the second would
take the first measurement up to a second before its `initialDelay` has passed. Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_precise_time", "format_time", "parse_time"]


def format_time(when: datetime) -> str:
    """`when` in UTC to the second, with a `Z`; a naive `when` is taken to be UTC already."""
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_precise_time(when: datetime) -> str:
    """`format_time` with the microseconds kept when there are any (`...T00:00:05.250000Z`)."""
    aware = (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    if not aware.microsecond:
        return format_time(aware)
    return aware.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: object) -> datetime | None:
    """The moment `text` names, in UTC; None when it is missing or not an RFC 3339 timestamp."""
    if not isinstance(text, str) or "T" not in text.upper():
        return None
    try:
        parsed = datetime.fromisoformat(text.upper())
    except ValueError:
        return None
    aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return aware.astimezone(UTC)
