"""Retry back-off for failed sync operations. Purely computational.

Argo CD's formula: the n-th retry (n counted from 0) waits `duration * factor**n`, capped at
`maxDuration`, after the previous attempt; defaults 5 s, factor 2, cap 3 min. An automated
sync without `retry` in its policy still gets `limit: 5`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from headway.model.application import Backoff, Retry

__all__ = [
    "AUTOMATED_DEFAULT_RETRY",
    "DEFAULT_BACKOFF",
    "SELF_HEAL_BACKOFF",
    "next_retry_at",
    "retries_remain",
    "retry_delay",
    "retry_schedule",
    "self_heal_delay",
]

DEFAULT_BACKOFF = Backoff(duration=5.0, factor=2, max_duration=180.0)
AUTOMATED_DEFAULT_RETRY = Retry(limit=5, refresh=False, backoff=DEFAULT_BACKOFF)
# The application controller's self-heal back-off defaults: 2 s, factor 3, cap 5 min.
SELF_HEAL_BACKOFF = Backoff(duration=2.0, factor=3, max_duration=300.0)


def retry_delay(retry_count: int, backoff: Backoff = DEFAULT_BACKOFF) -> timedelta:
    """The wait before retry number `retry_count` (0 for the first retry)."""
    seconds = backoff.duration * float(backoff.factor) ** retry_count
    if backoff.max_duration > 0:
        seconds = min(seconds, backoff.max_duration)
    return timedelta(seconds=seconds)


def next_retry_at(last_attempt: datetime, retry_count: int, backoff: Backoff) -> datetime:
    return last_attempt + retry_delay(retry_count, backoff)


def retries_remain(retry_count: int, limit: int) -> bool:
    """Whether another retry is allowed after `retry_count` retries (negative limit:
    unlimited)."""
    return limit < 0 or retry_count < limit


def retry_schedule(
    first_failure: datetime, retry: Retry, *, attempt_takes: float = 0.0
) -> list[datetime]:
    """When each retry starts, if every attempt fails and takes `attempt_takes` seconds.
    Only for finite limits."""
    if retry.limit < 0:
        raise ValueError("an unlimited retry policy has no finite schedule")
    times = []
    last_end = first_failure
    for n in range(retry.limit):
        start = next_retry_at(last_end, n, retry.backoff)
        times.append(start)
        last_end = start + timedelta(seconds=attempt_takes)
    return times


def self_heal_delay(attempts: int, backoff: Backoff = SELF_HEAL_BACKOFF) -> timedelta:
    """How long after the last operation self-heal attempt number `attempts` (1-based) may
    start; no wait before the first ever attempt (0)."""
    if attempts <= 0:
        return timedelta(0)
    return retry_delay(attempts - 1, backoff)
