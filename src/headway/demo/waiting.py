"""The demo's one way to wait: look at the real system until a condition holds or a deadline
passes, narrating what each look saw.

The demo runs real processes on real time, so it never sleeps a fixed time hoping something
happened: every wait (the mesh's metrics address, `headway serve` being ready, a Rollout
reaching a phase, Headway's revert commit, the webhook hearing it, the Application syncing it,
serve exiting) goes through `wait_until`, which names what was awaited and what was seen last
when it gives up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["POLL_SECONDS", "WaitTimedOut", "wait_until"]

POLL_SECONDS = 0.2

T = TypeVar("T")


class WaitTimedOut(Exception, Generic[T]):
    """`what` did not happen within `timeout` seconds; `last` is what the final look saw."""

    def __init__(self, *, what: str, timeout: float, last: T) -> None:
        super().__init__(f"{what} did not happen within {timeout:.0f}s (last seen: {last!r})")
        self.what = what
        self.timeout = timeout
        self.last = last


def wait_until(
    look: Callable[[], T],
    done: Callable[[T], bool],
    *,
    timeout: float,
    what: str,
    progress: Callable[[T], None] | None = None,
    interval: float = POLL_SECONDS,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """The first value of `look()` that is `done`, looking every `interval` seconds.

    `progress` sees every look before it is judged (the demo narrates changes with it). The
    condition is always looked at once more after the deadline, so a zero timeout is one look.
    A look may raise to end the wait early (a process it depends on has exited).
    """
    deadline = monotonic() + timeout
    while True:
        seen = look()
        if progress is not None:
            progress(seen)
        if done(seen):
            return seen
        if monotonic() >= deadline:
            raise WaitTimedOut(what=what, timeout=timeout, last=seen)
        sleep(interval)
