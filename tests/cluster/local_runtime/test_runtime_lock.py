"""One local runtime per state directory, held by an OS lock (`runtime.lock`), not by a
pidfile: a second runtime is refused before it touches the first one's processes, and a
SIGKILLed runtime does not block the next even when its old pid now names another process."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from cluster.local_runtime.harness import headway, write_config
from headway.cluster.local.kubelet.processes import process_alive

pytestmark = pytest.mark.slow


def _running_pid(state: Path) -> int:
    return int((state / "runtime.pid").read_text())


def test_a_second_runtime_past_the_pidfile_check_is_refused_by_the_lock(tmp_path: Path) -> None:
    write_config(tmp_path)
    assert headway("runtime", "up", state=tmp_path).returncode == 0
    try:
        first = _running_pid(tmp_path)
        claimed = json.loads((tmp_path / "runtime.json").read_text())
        # Two `up`s at once both find no pidfile; removing it puts the second in that window.
        (tmp_path / "runtime.pid").unlink()
        second = headway("runtime", "up", "--foreground", state=tmp_path)
        assert second.returncode == 1
        assert second.stderr.startswith(
            f"error: another runtime is running on state directory {tmp_path} (pid {first}"
        )
        assert "Traceback" not in second.stderr
        assert process_alive(first)
        assert json.loads((tmp_path / "runtime.json").read_text()) == claimed  # untouched
    finally:
        # `down` finds the runtime by its lock even without the pidfile
        assert headway("runtime", "down", state=tmp_path).stdout.startswith("runtime stopped")
    assert not process_alive(first)


def test_a_killed_runtimes_pidfile_naming_a_live_process_does_not_block_the_next(
    tmp_path: Path,
) -> None:
    write_config(tmp_path)
    assert headway("runtime", "up", state=tmp_path).returncode == 0
    first = _running_pid(tmp_path)
    os.kill(first, signal.SIGKILL)
    # The killed runtime's pid reused by an unrelated live process: this test's own.
    (tmp_path / "runtime.pid").write_text(f"{os.getpid()}\n")
    assert "runtime: stopped" in headway("runtime", "status", state=tmp_path).stdout
    try:
        started = headway("runtime", "up", state=tmp_path)
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith("runtime up (pid ")
        assert _running_pid(tmp_path) not in (first, os.getpid())
    finally:
        assert headway("runtime", "down", state=tmp_path).returncode == 0
