"""Time, as every timed part of Headway sees it.

Pauses, analysis intervals, back-off, sync windows and progress deadlines all read time
through a `Clock`, never from `time` or `datetime` directly. Production code gets a
`SystemClock`; tests get a `VirtualClock` and move it forward explicitly, so they assert
exact times and never sleep.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # only sleeping needs it; `headway check` reads the clock's types, never sleeps
    import asyncio

__all__ = ["EPOCH", "Clock", "SystemClock", "VirtualClock"]

# A fixed, readable starting point for virtual time in tests.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    """The only source of time for controllers and pure cores."""

    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware, in UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards; for measuring intervals."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""
        ...


class SystemClock:
    """Real time."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


@dataclass(order=True)
class _Sleeper:
    wake_at: float
    seq: int
    future: asyncio.Future[None] = field(compare=False)


class VirtualClock:
    """Time that moves only when a test says so.

    `advance(seconds)` moves time forward and wakes every `sleep()` whose deadline has
    passed, in deadline order. With `auto_advance=True`, a `sleep()` moves time forward by
    itself instead of waiting, which suits loops driven by a single task.
    """

    def __init__(self, start: datetime = EPOCH, *, auto_advance: bool = False) -> None:
        if start.tzinfo is None:
            raise ValueError("VirtualClock needs a timezone-aware start time")
        self._start = start
        self._elapsed = 0.0
        self._auto_advance = auto_advance
        self._sleepers: list[_Sleeper] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        return self._elapsed

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` and wake the sleepers that are due."""
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self._elapsed += seconds
        while self._sleepers and self._sleepers[0].wake_at <= self._elapsed:
            sleeper = heapq.heappop(self._sleepers)
            if not sleeper.future.done():
                sleeper.future.set_result(None)

    def set(self, when: datetime) -> None:
        """Move time forward to `when`."""
        self.advance((when - self.now()).total_seconds())

    @property
    def pending_sleepers(self) -> int:
        return sum(1 for s in self._sleepers if not s.future.done())

    async def sleep(self, seconds: float) -> None:
        import asyncio

        if self._auto_advance:
            self.advance(max(0.0, seconds))
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        wake_at = self._elapsed + max(0.0, seconds)
        heapq.heappush(self._sleepers, _Sleeper(wake_at, next(self._seq), future))
        if seconds <= 0:
            self.advance(0)
        await future
