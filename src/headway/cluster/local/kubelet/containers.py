"""One container of a local pod: its process, probes, restarts and Kubernetes-shaped status.

`ContainerRun` is the kubelet's live record for a container (I/O handles, so mutable);
the decisions it takes — restart or not, back-off, the status it reports — are small
functions over it and the pure `restart_backoff` and `probes` cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from headway.clock import Clock
from headway.cluster.local.kubelet import probes, restart_backoff
from headway.cluster.local.kubelet.processes import ProcessHandle
from headway.kubetime import format_time

__all__ = ["ContainerRun", "should_restart", "stop_process"]


@dataclass
class ContainerRun:
    name: str
    image: str
    handle: ProcessHandle | None = None
    started_at: datetime | None = None
    restart_count: int = 0
    starts: int = 0
    backoff: restart_backoff.BackoffEntry | None = None
    finished_mono: float | None = None
    terminated: dict[str, Any] | None = None  # the last run's `terminated` state
    previous_terminated: dict[str, Any] | None = None  # the run before that
    waiting: tuple[str, str] | None = ("ContainerCreating", "")
    done: bool = False  # terminated and the restart policy will not restart it
    readiness: probes.ProbeState | None = None
    liveness: probes.ProbeState | None = None
    startup_pending: bool = False  # a startupProbe has not passed yet
    pre_stop: Callable[[float], Awaitable[None]] | None = None
    probe_tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stopping: asyncio.Task[None] | None = None
    kill_reason: str = ""
    image_attempts: int = 0
    image_retry_mono: float = 0.0
    sidecar: bool = False  # an init container with `restartPolicy: Always`

    @property
    def running(self) -> bool:
        return self.handle is not None

    @property
    def ready(self) -> bool:
        if not self.running or self.stopping is not None or self.startup_pending:
            return False
        return self.readiness is None or self.readiness.passing

    def cancel_probes(self) -> None:
        for task in self.probe_tasks:
            task.cancel()
        self.probe_tasks.clear()

    def status(self, container_id_prefix: str = "process://") -> dict[str, Any]:
        """The `containerStatuses[]` entry."""
        out: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "imageID": "",
            "ready": self.ready,
            "started": self.running and not self.startup_pending,
            "restartCount": self.restart_count,
        }
        if self.handle is not None and self.started_at is not None:
            out["state"] = {"running": {"startedAt": format_time(self.started_at)}}
            out["containerID"] = f"{container_id_prefix}{self.handle.pid}"
        elif self.done and self.terminated is not None:
            out["state"] = {"terminated": dict(self.terminated)}
        else:
            reason, message = self.waiting or ("ContainerCreating", "")
            waiting = {"reason": reason}
            if message:
                waiting["message"] = message
            out["state"] = {"waiting": waiting}
        last = self.previous_terminated if self.done and self.handle is None else self.terminated
        out["lastState"] = {"terminated": dict(last)} if last else {}
        return out


def should_restart(policy: str, exit_code: int) -> bool:
    """restartPolicy: Always restarts every exit, OnFailure a non-zero one, Never none."""
    if policy == "Always":
        return True
    if policy == "OnFailure":
        return exit_code != 0
    return False


def terminated_state(
    *,
    exit_code: int,
    started: datetime | None,
    finished: datetime,
    reason: str = "",
    message: str = "",
) -> dict[str, Any]:
    """A `terminated` state as the kubelet writes it (`Completed` for 0, else `Error`)."""
    state: dict[str, Any] = {
        "exitCode": exit_code,
        "reason": reason or ("Completed" if exit_code == 0 else "Error"),
        "finishedAt": format_time(finished),
    }
    if started is not None:
        state["startedAt"] = format_time(started)
    if exit_code > 128:
        state["signal"] = exit_code - 128
    if message:
        state["message"] = message
    return state


async def stop_process(
    handle: ProcessHandle,
    *,
    grace_seconds: float,
    clock: Clock,
    pre_stop: Callable[[float], Awaitable[None]] | None = None,
) -> None:
    """Run the preStop hook, SIGTERM the container's process group, SIGKILL it once the
    grace period (which the hook counts against) has passed.

    Every wait is on `clock`: the kubelet's for a Pod deleted or restarted (virtual time in
    tests), real time when the runtime shuts down, so a frozen clock cannot hold shutdown up.
    The hook is cut off at the grace period on the same clock, whatever clock it waits on."""
    deadline = clock.monotonic() + grace_seconds
    if pre_stop is not None and handle.poll() is None:
        await _within(pre_stop(grace_seconds), grace_seconds, clock)
    handle.signal_group(signal.SIGTERM)
    while handle.group_alive() and clock.monotonic() < deadline:
        await clock.sleep(0.05)
    if handle.group_alive():
        handle.signal_group(signal.SIGKILL)
        while handle.group_alive():
            await clock.sleep(0.02)
    with contextlib.suppress(ChildProcessError, subprocess.TimeoutExpired):
        handle.popen.wait(timeout=1)  # reap the leader


async def _within(hook: Awaitable[None], seconds: float, clock: Clock) -> None:
    """Run `hook` until it ends or `seconds` of `clock` have passed; its failure is ignored
    (a failing hook never blocks termination)."""
    running = asyncio.ensure_future(hook)
    timer = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait({running, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (running, timer):
            task.cancel()
        await asyncio.gather(running, timer, return_exceptions=True)


def rotate_log(log_path: str) -> None:
    """Keep the previous run's log as `<container>.previous.log` (for `logs --previous`)."""
    if os.path.exists(log_path):
        os.replace(log_path, log_path.removesuffix(".log") + ".previous.log")


def crash_backoff_message(seconds: float, container: str, pod: str) -> str:
    return f"back-off {seconds:g}s restarting failed container={container} pod={pod}"
