"""An exclusive lock on one file of a state directory, held for the life of a process.

`headway serve` (`serve.lock`) and the local runtime (`runtime.lock`) each allow one
process per state directory. `DirLock` is an exclusive `flock` on the file: the kernel drops
it when the process ends in any way, SIGKILL included, so a killed holder never blocks the
next one and there is no stale lock to clean up. The file also records the holder (pid,
host, since) for the refusal message; it is read only for that message, never to decide
who holds the lock. The descriptor is not inherited by child processes (Python opens files
non-inheritable), so a Git, Helm or container subprocess cannot keep the lock alive after
its parent died.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["DirLock", "Holder", "LockHeld", "holder_of"]


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as far as the holder wrote it down (pid 0: not known)."""

    pid: int
    host: str
    since: str

    def __str__(self) -> str:
        if not self.pid:
            return "another process (its pid is not recorded yet)"
        where = f" on {self.host}" if self.host else ""
        since = f", since {self.since}" if self.since else ""
        return f"pid {self.pid}{where}{since}"


class LockHeld(Exception):
    """Another process holds the lock; `holder` says which."""

    def __init__(self, holder: Holder, where: str) -> None:
        super().__init__(f"{where} is held by {holder}")
        self.holder = holder
        self.where = where


class DirLock:
    """The exclusive lock `<directory>/<name>`; `acquire()` never waits."""

    def __init__(self, directory: Path, name: str, *, now: datetime) -> None:
        self.path = directory / name
        self._now = now
        self._fd: int | None = None

    def acquire(self) -> None:
        """Hold the lock from now on, or raise `LockHeld` at once."""
        if self._fd is not None:
            return
        # Opened without truncating: the holder's record must survive a refused attempt.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise LockHeld(holder, f"the state directory lock {self.path}") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        _write_holder(fd, Holder(os.getpid(), socket.gethostname(), self._now.isoformat()))

    def release(self) -> None:
        """Stop holding the lock; a no-op when not holding it."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> DirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder_of(path: Path) -> Holder | None:
    """Who holds the lock at `path` now, or None when no process does (a killed holder's
    file is left behind but holds nothing). Probed with a shared lock, dropped at once."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_holder(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


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
