"""A runtime on a virtual clock that nobody moves any more (a test at its end) still shuts
down: the kubelet's shutdown waits on real time, bounded by the shutdown grace period, and
leaves no container process behind. A preStop `sleep`, a process that ignores SIGTERM and a
deleted Pod whose stop is under way on the virtual clock are the waits that used to sleep
on the frozen clock forever."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import write_config
from headway.clock import VirtualClock
from headway.cluster.local.kubelet.processes import process_alive
from headway.cluster.local.runtime import Runtime
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow


def _stubborn(name: str, **container: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 600,
            "containers": [{"name": "app", "image": "headway-demo/stubborn:v1", **container}],
        },
    }


def _started(state_dir: Path, name: str) -> Callable[[], bool]:
    log = state_dir / "logs" / "default" / name / "app.log"
    return lambda: log.exists() and "ignoring SIGTERM" in log.read_text()


def _pid(runtime: Runtime, name: str) -> int:
    status = runtime.cluster.get("v1", "Pod", name, "default").get("status") or {}
    [container] = status.get("containerStatuses") or [{}]
    return int(str(container.get("containerID") or "x//0").split("//")[1])


async def test_shutdown_on_a_frozen_virtual_clock_ends_and_kills_the_containers(
    tmp_path: Path,
) -> None:
    runtime = Runtime(
        state_dir=tmp_path,
        clock=VirtualClock(),  # never advanced
        config_path=write_config(tmp_path),
        shutdown_grace_seconds=1.0,
    )
    stop, started = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(runtime.run(stop, ready=started.set))
    pids: list[int] = []
    try:
        await eventually(started.is_set, what="the runtime started")
        runtime.cluster.apply(_stubborn("ignores-term"), field_manager="test")
        hook = {"preStop": {"sleep": {"seconds": 300}}}
        runtime.cluster.apply(_stubborn("long-pre-stop", lifecycle=hook), field_manager="test")
        runtime.cluster.apply(_stubborn("deleted"), field_manager="test")
        for name in ("ignores-term", "long-pre-stop", "deleted"):
            await eventually(_started(tmp_path, name), what=f"{name} running")
            pids.append(_pid(runtime, name))
        uid = runtime.cluster.get("v1", "Pod", "deleted", "default")["metadata"]["uid"]
        runtime.cluster.delete("v1", "Pod", "deleted", "default")
        # The kubelet hands a deleted Pod's run to its stop (on the frozen clock) at once.
        await eventually(
            lambda: not runtime.kubelet.container_process_groups(uid), what="stop under way"
        )
        stop.set()
        # A bound on a broken run (it hung forever before), not a timing claim.
        await asyncio.wait_for(asyncio.shield(task), timeout=60)
        assert not [pid for pid in pids if process_alive(pid)]
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
