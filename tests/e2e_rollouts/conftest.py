"""Every end-to-end rollout test must leave no process behind: pods, routers, Prometheus and
`headway serve` processes started for it are looked for in /proc at teardown."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.cluster.local.kubelet.processes import RUNTIME_ID_ENV


def _mentions(pid: int, needles: list[bytes]) -> bool:
    for part in ("cmdline", "environ"):
        try:
            data = Path(f"/proc/{pid}/{part}").read_bytes()
        except OSError:
            continue
        if any(needle in data for needle in needles):
            return True
    return False


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def children_of_this_process() -> set[int]:
    return {
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and _parent(int(entry)) == os.getpid() and not _zombie(int(entry))
    }


def leftover_processes(tmp_path: Path, before: set[int]) -> list[int]:
    """Live processes naming the test's directory, marked with its runtime's id, or started
    by this process during the test (an HAProxy whose directory moved to /tmp, say)."""
    needles = [str(tmp_path).encode()]
    info = tmp_path / "state" / "runtime.json"
    if info.exists():
        runtime_id = str(json.loads(info.read_text()).get("runtimeId") or "")
        if runtime_id:
            needles.append(f"{RUNTIME_ID_ENV}={runtime_id}".encode())
    found = sorted(children_of_this_process() - before)
    for entry in os.listdir("/proc"):
        pid = int(entry) if entry.isdigit() else os.getpid()
        named = pid != os.getpid() and pid not in found and _mentions(pid, needles)
        if named and not _zombie(pid):
            found.append(pid)
    return found


@pytest.fixture(autouse=True)
def no_process_left_behind(tmp_path: Path) -> Iterator[None]:
    before = children_of_this_process()
    yield
    deadline = time.monotonic() + 10
    left = leftover_processes(tmp_path, before)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftover_processes(tmp_path, before)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind by the test: {left}"
