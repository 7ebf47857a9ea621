from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from headway.clock import EPOCH, SystemClock, VirtualClock


def test_virtual_clock_moves_only_when_advanced(clock: VirtualClock) -> None:
    assert clock.now() == EPOCH
    clock.advance(90)
    assert clock.now() == EPOCH + timedelta(seconds=90)
    assert clock.monotonic() == 90


def test_virtual_clock_refuses_to_go_backwards(clock: VirtualClock) -> None:
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)


async def test_sleepers_wake_in_deadline_order_at_exact_times(clock: VirtualClock) -> None:
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.monotonic()))

    tasks = [asyncio.create_task(sleeper("late", 30)), asyncio.create_task(sleeper("early", 10))]
    await asyncio.sleep(0)
    assert clock.pending_sleepers == 2
    clock.advance(10)
    await asyncio.sleep(0)
    assert woke == [("early", 10)]
    clock.advance(25)
    await asyncio.gather(*tasks)
    assert woke == [("early", 10), ("late", 35)]


async def test_auto_advance_clock_does_not_wait() -> None:
    clock = VirtualClock(auto_advance=True)
    await clock.sleep(120)
    assert clock.monotonic() == 120


def test_system_clock_is_timezone_aware() -> None:
    assert SystemClock().now().tzinfo is not None
