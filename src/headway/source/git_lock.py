"""The lock of one repository of the Git cache, held by every write and every read that may
fetch: exclusive across threads and across processes sharing the cache directory (a `serve`
and a CLI command over the same state directory, two CLI commands over `~/.cache`).

Within a process an `RLock` orders threads and lets the holder take it again; across
processes, `flock` on `<repository>/headway.lock`, which the kernel releases when the holder
closes it or dies (a killed process never leaves the cache locked). Without the file lock, a
process could move the cache's `refs/heads/<branch>` between another's commit and its push,
which then pushed the wrong commit and reported its own as landed.

libgit2 writes a ref, `packed-refs` or `config` through a `<name>.lock` file it renames into
place; a process killed in between leaves that file, and libgit2 then refuses every later
write of the same ref ("failed to lock file"), so a cache whose writer was killed once would
never fetch again. Every writer of the cache holds this lock, so whoever takes it knows any
such file is left over from a dead holder: `RepositoryLock` removes them each time it takes
the file lock (`stale_lock_files`).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

__all__ = ["LOCK_FILE", "RepositoryLock", "stale_lock_files"]

LOCK_FILE = "headway.lock"
_log = logging.getLogger(__name__)


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
                _remove_stale(self._file.parent)
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


def stale_lock_files(repository: Path) -> list[Path]:
    """libgit2's `*.lock` files in `repository`: at its top level (`HEAD.lock`,
    `config.lock`, `packed-refs.lock`, ...) and under `refs/`; never `LOCK_FILE`."""
    found = [
        repository / name
        for name in _names(repository)
        if name.endswith(".lock") and name != LOCK_FILE
    ]
    pending = [repository / "refs"]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            elif entry.name.endswith(".lock"):
                found.append(Path(entry.path))
    return found


def _names(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _remove_stale(repository: Path) -> None:
    """Called holding the file lock: no live writer owns any lock file left."""
    for stale in stale_lock_files(repository):
        try:
            stale.unlink()
        except FileNotFoundError:
            continue
        _log.warning("%s: removed %s, left by a writer that died mid-write", repository, stale.name)
