"""One controller process per state: the leader lock `headway serve` takes before it starts.

Two controllers over one store would each take operations, run hooks and write reverts, so
the second must refuse to start. `LeaderLock` is the shape any backend fills: `acquire()`
returns once this process leads, or raises `LeadershipHeld` naming the holder; `release()`
gives the lead up.

`StateDirLock` is the local backend's: an exclusive `flock` on `<state-dir>/serve.lock`. The
kernel drops the lock when the process ends in any way, SIGKILL included, so a killed serve
never blocks the next one and there is no stale lock to clean up. The file also records the
holder (pid, host, since) for the refusal message; it is read only for that message, never
to decide who leads. The descriptor is not inherited by child processes (Python opens files
non-inheritable), so a Git or Helm subprocess cannot keep the lock alive after serve dies.

On Kubernetes the same role belongs to a `coordination.k8s.io` Lease (renewed by the leader,
taken over when it expires); that backend is not built yet.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

__all__ = ["LOCK_FILE_NAME", "Holder", "LeaderLock", "LeadershipHeld", "StateDirLock"]

LOCK_FILE_NAME = "serve.lock"


@dataclass(frozen=True)
class Holder:
    """Who holds the lead, as far as the holder wrote it down (pid 0: not known)."""

    pid: int
    host: str
    since: str

    def __str__(self) -> str:
        if not self.pid:
            return "another process (its pid is not recorded yet)"
        where = f" on {self.host}" if self.host else ""
        since = f", since {self.since}" if self.since else ""
        return f"pid {self.pid}{where}{since}"


class LeadershipHeld(Exception):
    """Another process leads; `holder` says which."""

    def __init__(self, holder: Holder, where: str) -> None:
        super().__init__(f"{where} is held by {holder}")
        self.holder = holder
        self.where = where


class LeaderLock(Protocol):
    def acquire(self) -> None:
        """Lead from now on, or raise `LeadershipHeld` at once (never wait)."""
        ...

    def release(self) -> None:
        """Stop leading; a no-op when not leading."""
        ...


class StateDirLock:
    """The leader lock of one local state directory (`<state-dir>/serve.lock`)."""

    def __init__(self, state_dir: Path, *, now: datetime) -> None:
        self.path = state_dir / LOCK_FILE_NAME
        self._now = now
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        # Opened without truncating: the holder's record must survive a refused attempt.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise LeadershipHeld(holder, f"the state directory lock {self.path}") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        _write_holder(fd, Holder(os.getpid(), socket.gethostname(), self._now.isoformat()))

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> StateDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _write_holder(fd: int, holder: Holder) -> None:
    record = json.dumps({"pid": holder.pid, "host": holder.host, "since": holder.since})
    os.ftruncate(fd, 0)
    os.pwrite(fd, record.encode() + b"\n", 0)


def _read_holder(fd: int) -> Holder:
    """The holder's record; pid 0 when it has not written one yet (or it is unreadable)."""
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return Holder(int(data["pid"]), str(data.get("host") or ""), str(data.get("since") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return Holder(0, "", "")
