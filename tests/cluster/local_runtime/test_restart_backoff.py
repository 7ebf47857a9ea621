"""The kubelet's restart back-off on a virtual clock: immediate, then 10 s doubling to 5 min."""

from __future__ import annotations

from headway.clock import VirtualClock
from headway.cluster.local.kubelet import restart_backoff as rb


def _restart_times(clock: VirtualClock, crashes: int, *, run_for: float = 0.0) -> list[float]:
    """Simulate a container that runs `run_for` seconds and exits, restarted as the kubelet does."""
    entry: rb.BackoffEntry | None = None
    restarts: list[float] = []
    for _ in range(crashes):
        clock.advance(run_for)
        finished = clock.monotonic()
        while rb.in_backoff(entry, finished_at=finished, now=clock.monotonic(), max_seconds=300):
            clock.advance(1)
        entry = rb.next_entry(entry, finished_at=finished, initial=10, max_seconds=300)
        restarts.append(clock.monotonic() - finished)
    return restarts


def test_crash_loop_waits_double_each_time_capped_at_five_minutes(clock: VirtualClock) -> None:
    assert _restart_times(clock, 8) == [0, 10, 20, 40, 80, 160, 300, 300]


def test_a_container_that_ran_long_restarts_at_once(clock: VirtualClock) -> None:
    assert _restart_times(clock, 3, run_for=601) == [0, 0, 0]


def test_remaining_wait(clock: VirtualClock) -> None:
    entry = rb.BackoffEntry(delay=20, last_update=0)
    assert rb.remaining(entry, finished_at=5, now=10) == 15
    assert rb.remaining(None, finished_at=5, now=10) == 0
