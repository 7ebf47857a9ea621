"""Waiting for a real condition in an end-to-end test: the one `eventually` every test uses.

End-to-end tests run real processes on real time, so they never sleep a fixed time hoping
something has happened: they poll the condition itself and fail, naming it and the last value
seen, when a generous deadline passes. The deadline is a bound on a broken run, not a timing
claim (those live in bench/), so it is long enough for a loaded 2-core machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["POLL_SECONDS", "eventually", "eventually_async", "wait_for"]

POLL_SECONDS = 0.1


async def eventually(check: Callable[[], Any], *, timeout: float = 30.0, what: str = "") -> Any:
    """`check()`'s first truthy value; AssertionError after `timeout` seconds (asyncio tests)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        last = check()
        if last:
            return last
        await asyncio.sleep(POLL_SECONDS)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or check}: last {last!r}")


async def eventually_async(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 30.0, what: str = ""
) -> Any:
    """`eventually` for a check that must itself await (a real request, say)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(POLL_SECONDS)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or check}: last {last!r}")


def wait_for(check: Callable[[], Any], *, timeout: float = 30.0, what: str = "") -> Any:
    """`eventually` for tests that drive subprocesses without an event loop."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or check}: last {last!r}")
