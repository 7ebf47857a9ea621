"""The kubelet's restart back-off, purely computational.

Per container, an entry holds the current delay and the time of the last restart
decision. When a container finishes at time `f`:

  * no entry, or `f - last_update > 2 * max` (it ran long enough): restart now and set the
    delay to `initial`;
  * otherwise, while `now - f < delay` the container waits in `CrashLoopBackOff`; once that
    has passed it restarts and the delay doubles, capped at `max`.

With the kubelet's numbers (initial 10 s, max 300 s) a container that exits at once
restarts immediately, then after 10 s, 20 s, 40 s, ... 300 s.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BackoffEntry", "in_backoff", "next_entry", "remaining"]


@dataclass(frozen=True)
class BackoffEntry:
    delay: float
    last_update: float


def _expired(entry: BackoffEntry, finished_at: float, max_seconds: float) -> bool:
    return finished_at - entry.last_update > 2 * max_seconds


def in_backoff(
    entry: BackoffEntry | None, *, finished_at: float, now: float, max_seconds: float
) -> bool:
    """Whether a container that finished at `finished_at` must still wait at `now`."""
    if entry is None or _expired(entry, finished_at, max_seconds):
        return False
    return now - finished_at < entry.delay


def remaining(entry: BackoffEntry | None, *, finished_at: float, now: float) -> float:
    """Seconds left to wait (0 when none)."""
    if entry is None:
        return 0.0
    return max(0.0, entry.delay - (now - finished_at))


def next_entry(
    entry: BackoffEntry | None, *, finished_at: float, initial: float, max_seconds: float
) -> BackoffEntry:
    """The entry after deciding to restart a container that finished at `finished_at`."""
    if entry is None or _expired(entry, finished_at, max_seconds):
        return BackoffEntry(initial, finished_at)
    return BackoffEntry(min(entry.delay * 2, max_seconds), finished_at)
