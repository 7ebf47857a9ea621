"""The runtime loop survives a step that fails: one bad object must not take every Pod down."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from headway.clock import VirtualClock
from headway.cluster.local.runtime import Runtime


async def test_a_failing_step_is_logged_once_and_the_loop_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Runtime(state_dir=tmp_path, clock=VirtualClock(), config_path=tmp_path / "none")
    stop = asyncio.Event()
    calls: list[int] = []

    async def failing_twice_then_stopping() -> float | None:
        calls.append(len(calls) + 1)
        if len(calls) <= 2:
            runtime.wake()  # ask for the next step at once
            raise AttributeError("'int' object has no attribute 'get'")
        stop.set()
        return None

    monkeypatch.setattr(runtime, "step", failing_twice_then_stopping)
    with caplog.at_level(logging.ERROR, logger="headway.runtime"):
        await asyncio.wait_for(runtime.run(stop), timeout=20)
    assert calls == [1, 2, 3]
    failures = [r for r in caplog.records if "runtime step failed" in r.getMessage()]
    assert len(failures) == 1  # the same failure again is not logged again
    assert "AttributeError: 'int' object has no attribute 'get'" in failures[0].getMessage()
    assert failures[0].exc_info is not None  # with its traceback, in runtime.log
