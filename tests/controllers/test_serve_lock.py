"""One `headway serve` per state directory: the second is refused naming the first, and a
SIGKILLed serve does not block the next (issue 16, item 8)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from headway.controllers.leader_lock import LeaderLock, LeadershipHeld, StateDirLock

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_second_lock_on_the_same_directory_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    first: LeaderLock = StateDirLock(tmp_path, now=NOW)
    first.acquire()
    with pytest.raises(LeadershipHeld) as refused:
        StateDirLock(tmp_path, now=NOW).acquire()
    assert refused.value.holder.pid == os.getpid()
    assert refused.value.holder.since == NOW.isoformat()
    first.release()
    with StateDirLock(tmp_path, now=NOW):
        pass


def test_a_refused_attempt_keeps_the_holders_record(tmp_path: Path) -> None:
    with StateDirLock(tmp_path, now=NOW):
        for _ in range(2):
            with pytest.raises(LeadershipHeld) as refused:
                StateDirLock(tmp_path, now=NOW).acquire()
            assert refused.value.holder.pid == os.getpid()


def test_other_directories_do_not_share_the_lock(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with StateDirLock(tmp_path / "a", now=NOW), StateDirLock(tmp_path / "b", now=NOW):
        pass


def _start_serve(state: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "headway", "serve", "--state-dir", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_serving(serve: subprocess.Popen[str]) -> None:
    assert serve.stdout is not None
    line = serve.stdout.readline()
    assert line.startswith("serving "), (line, serve.stderr.read() if serve.stderr else "")


def test_a_second_serve_is_refused_and_a_killed_one_does_not_block_the_next(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    first = _start_serve(state)
    try:
        _wait_serving(first)
        second = subprocess.run(
            [sys.executable, "-m", "headway", "serve", "--state-dir", str(state)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 1
        assert (
            f"error: another `headway serve` is running on state directory {state} "
            f"(pid {first.pid}" in second.stderr
        )
        assert "Traceback" not in second.stderr
        assert second.stdout == ""
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        first.kill()
        first.wait(timeout=30)
    third = _start_serve(state)
    try:
        _wait_serving(third)
    finally:
        third.terminate()
        third.wait(timeout=30)
    assert third.returncode == 0


def test_the_lock_is_released_when_serve_stops(tmp_path: Path) -> None:
    state = tmp_path / "state"
    serve = _start_serve(state)
    try:
        _wait_serving(serve)
        with pytest.raises(LeadershipHeld):
            StateDirLock(state, now=NOW).acquire()
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    with StateDirLock(state, now=NOW):  # serve has exited: the kernel dropped its lock
        pass

