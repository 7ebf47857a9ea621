"""Hear a container's exit when it happens, instead of polling for it.

On Linux a pidfd (`os.pidfd_open`, kernel 5.3+) becomes readable once its process has
exited; the event loop watches it like a socket, so a runtime with 100 idle Pods sleeps
until one of them exits. Where there is no pidfd the caller is told so and polls.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

__all__ = ["watch_exit"]


def watch_exit(pid: int, on_exit: Callable[[], None]) -> bool:
    """Call `on_exit` once, on the running event loop, when process `pid` has exited.

    Returns False (nothing watched) where the platform has no pidfd or the process is
    already gone and reaped; the caller must then look for the exit itself."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return False
    try:
        fd = opener(pid)
    except OSError:
        return False
    loop = asyncio.get_running_loop()

    def exited() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        on_exit()

    loop.add_reader(fd, exited)
    return True
