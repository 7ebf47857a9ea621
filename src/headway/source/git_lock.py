"""The lock of one repository of the Git cache, held by every write and every read that may
fetch: exclusive across threads and across processes sharing the cache directory (a `serve`
and a CLI command over the same state directory, two CLI commands over `~/.cache`).

Within a process an `RLock` orders threads and lets the holder take it again; across
processes, `flock` on `<repository>/headway.lock`, which the kernel releases when the holder
closes it or dies (a killed process never leaves the cache locked). Without the file lock, a
process could move the cache's `refs/heads/<branch>` between another's commit and its push,
which then pushed the wrong commit and reported its own as landed.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

__all__ = ["LOCK_FILE", "RepositoryLock"]

LOCK_FILE = "headway.lock"


def _nothing(_lock_file: Path) -> None:
    return None


# A test hook: called when another process holds the lock, just before waiting for it (so a
# test knows the second process is waiting, not merely slow).
on_contended: Callable[[Path], None] = _nothing


class RepositoryLock:
    """A context manager; reentrant in the thread that holds it."""

    def __init__(self, repository: Path) -> None:
        self._file = repository / LOCK_FILE
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> None:
        self._threads.acquire()
        if self._depth == 0:
            try:
                self._fd = self._take()
            except BaseException:
                self._threads.release()
                raise
        self._depth += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            os.close(self._fd)  # closing the file releases its flock
            self._fd = None
        self._threads.release()

    def _take(self) -> int:
        fd = os.open(self._file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                on_contended(self._file)
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd
