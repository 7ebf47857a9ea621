"""The demo's background processes: the local runtime (`headway runtime up`) and the
controllers (`headway serve`), started as the user would start them, stopped by pid."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from headway.demo.layout import DemoLayout, DemoSetupError
from headway.demo.waiting import WaitTimedOut, wait_until

__all__ = [
    "metrics_address",
    "serve_controllers",
    "start_runtime",
    "start_serve",
    "stop_runtime",
    "stop_serve",
]


def _headway(*args: str) -> list[str]:
    return [sys.executable, "-m", "headway", *args]


def start_runtime(layout: DemoLayout) -> None:
    result = subprocess.run(
        _headway("runtime", "up", "--state-dir", str(layout.state), "--config", str(layout.config)),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise DemoSetupError(f"`headway runtime up` failed: {detail}")


def stop_runtime(layout: DemoLayout) -> str:
    result = subprocess.run(
        _headway("runtime", "down", "--state-dir", str(layout.state)),
        capture_output=True,
        text=True,
        check=False,
        timeout=90,
    )
    return (result.stdout + result.stderr).strip()


def metrics_address(layout: DemoLayout, *, timeout: float = 15.0) -> str:
    """The mesh's runtime-wide metrics address (`host:port`) from `runtime.json`, or ""."""

    def recorded() -> str:
        with contextlib.suppress(OSError, ValueError):
            info = json.loads((layout.state / "runtime.json").read_text())
            return str(info.get("metricsAddress") or "")
        return ""

    try:
        return wait_until(
            recorded, bool, timeout=timeout, what="the mesh's metrics address", interval=0.1
        )
    except WaitTimedOut:
        return ""


def start_serve(layout: DemoLayout, *extra: str) -> int:
    """`headway serve` in its own session, logging to `.headway/serve.log`; returns its pid."""
    with open(layout.serve_log, "ab") as log:
        child = subprocess.Popen(
            _headway("serve", "--state-dir", str(layout.state), *extra),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=layout.root,
        )
    layout.serve_pid.write_text(f"{child.pid}\n")
    return child.pid


def _announced_controllers(layout: DemoLayout, pid: int) -> list[str]:
    """The names in serve's start line (`serving a, b (pid ...)`), [] before it is written;
    DemoSetupError when serve has exited instead."""
    with contextlib.suppress(OSError):
        for line in layout.serve_log.read_text(errors="replace").splitlines():
            if line.startswith("serving ") and "(pid" in line:
                names = line.removeprefix("serving ").split(" (pid", 1)[0]
                return [n.strip() for n in names.split(",") if n.strip()]
    if not _alive(pid):
        tail = layout.serve_log.read_text(errors="replace")[-800:]
        raise DemoSetupError(f"`headway serve` exited; its log ends:\n{tail}")
    return []


def serve_controllers(layout: DemoLayout, pid: int, *, timeout: float = 20.0) -> list[str]:
    """Wait for `headway serve` to be ready: it prints the controllers it runs once they are
    built and it holds the state directory's lock. Returns their names."""
    try:
        return wait_until(
            lambda: _announced_controllers(layout, pid),
            bool,
            timeout=timeout,
            what="`headway serve` starting",
            interval=0.1,
        )
    except WaitTimedOut:
        raise DemoSetupError(f"`headway serve` did not start within {timeout:.0f}s") from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            return False
    return True


def stop_serve(layout: DemoLayout, *, grace: float = 10.0) -> bool:
    """SIGTERM the recorded `headway serve`, SIGKILL after `grace`; True if one was running."""
    try:
        pid = int(layout.serve_pid.read_text().strip())
    except (OSError, ValueError):
        return False
    if not _alive(pid):
        layout.serve_pid.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    if not _exited(pid, timeout=grace):
        os.kill(pid, signal.SIGKILL)
        _exited(pid, timeout=grace)
    layout.serve_pid.unlink(missing_ok=True)
    return True


def _exited(pid: int, *, timeout: float) -> bool:
    try:
        wait_until(
            lambda: _alive(pid),
            lambda alive: not alive,
            timeout=timeout,
            what=f"pid {pid} exiting",
            interval=0.05,
        )
    except WaitTimedOut:
        return False
    return True
