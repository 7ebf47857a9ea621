"""HAProxy as a child process, and its runtime API over the admin socket."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from headway.child_process import dying_with_parent
from headway.routers.dataplane.haproxy.config import HAProxyLayout
from headway.routers.dataplane.protocol import RouterError

__all__ = ["AdminSocket", "HAProxyProcess", "ServerStats", "parse_server_stats"]

# Answers the runtime API gives instead of an error status.
ERROR_MARKERS = (
    "Unknown command",
    "No such",
    "Require ",
    "Invalid",
    "unknown",
    "not found",
    "failed",
    "Permission denied",
)
START_TIMEOUT_SECONDS = 10.0
STOP_TIMEOUT_SECONDS = 5.0
STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx", "other")


class AdminSocket:
    """Sends runtime API commands (`level admin`) one connection per batch."""

    def __init__(self, path: Path) -> None:
        self._path = path

    async def run(self, *commands: str, check: bool = True) -> str:
        """Run commands in order; with `check`, raises RouterError if HAProxy rejects one."""
        for command in commands:
            if "\n" in command or ";" in command:
                raise RouterError(f"refusing a runtime command with a separator: {command!r}")
        reader, writer = await asyncio.open_unix_connection(str(self._path))
        try:
            writer.write(("; ".join(commands) + "\n").encode())
            await writer.drain()
            answer = (await reader.read()).decode(errors="replace")
        finally:
            writer.close()
        for marker in ERROR_MARKERS if check else ():
            if marker in answer:
                raise RouterError(f"HAProxy rejected {list(commands)}: {answer.strip()}")
        return answer


@dataclass(frozen=True)
class ServerStats:
    """Counters of one server (or a backend's total, `server == "BACKEND"`) from `show stat`."""

    backend: str
    server: str
    responses: dict[str, int]  # status class ("2xx", ...) -> count
    average_total_ms: int  # HAProxy's `ttime`: mean over the last 1,024 requests


def _int(value: str) -> int:
    return int(value) if value.strip().isdigit() else 0


def parse_server_stats(text: str) -> list[ServerStats]:
    """Rows of `show stat` CSV output for servers and backends."""
    rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
    stats = []
    for row in rows:
        if not row.get("pxname") or row.get("svname") == "FRONTEND":
            continue
        responses = {cls: _int(row.get(f"hrsp_{cls}") or "") for cls in STATUS_CLASSES}
        stats.append(
            ServerStats(
                backend=row["pxname"],
                server=row["svname"],
                responses=responses,
                average_total_ms=_int(row.get("ttime") or ""),
            )
        )
    return stats


class HAProxyProcess:
    """One HAProxy run in the foreground (`-db`) as our child, stopped by its PID."""

    def __init__(self, binary: str, layout: HAProxyLayout) -> None:
        self._binary = binary
        self._layout = layout
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def start(self) -> None:
        await self._stop_stale()
        output = self._layout.work_dir / "haproxy.log"
        with output.open("wb") as stderr:
            self._process = subprocess.Popen(
                self._argv(),
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
        self._layout.pid_file.write_text(f"{self._process.pid}\n")
        await self._wait_until_listening(output)

    def _argv(self) -> list[str]:
        """HAProxy with the parent-death signal (`child_process.dying_with_parent`): a killed
        Headway must not leave it holding its ports, and no Python of ours runs between fork
        and exec (a `preexec_fn` can deadlock in the child of a threaded parent)."""
        return dying_with_parent([self._binary, "-db", "-f", str(self._layout.config_file)])

    async def _stop_stale(self) -> None:
        """Stop an HAProxy a crashed earlier run left on this work dir (found by its pidfile)."""
        try:
            pid = int(self._layout.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ValueError):
            return
        if str(self._layout.config_file).encode() not in cmdline:
            return  # the PID was reused by an unrelated process
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            if "State:\tZ" in Path(f"/proc/{pid}/status").read_text():
                break  # exited; its parent (another router object) will reap it
            await asyncio.sleep(0.02)

    async def _wait_until_listening(self, output: Path) -> None:
        # Polling a real socket with a deadline; this is process start-up, not virtual time.
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                await self.stop()
                raise RouterError(f"haproxy exited at start-up: {output.read_text().strip()}")
            try:
                await AdminSocket(self._layout.admin_socket).run("show info", check=False)
                return
            except OSError:
                await asyncio.sleep(0.02)
        await self.stop()
        raise RouterError(f"haproxy did not open its admin socket in {START_TIMEOUT_SECONDS}s")

    async def stop(self) -> None:
        """SIGTERM (hard stop), then SIGKILL if it lingers; removes the pidfile."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(process.wait, STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
        with contextlib.suppress(FileNotFoundError):
            if self._layout.pid_file.read_text().strip() == str(process.pid):
                os.unlink(self._layout.pid_file)  # only our own; a successor may own it now
