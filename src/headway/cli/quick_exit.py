"""Leaving a one-shot command without tearing its heap down.

`headway check` of a large repository ends holding millions of objects: the parsed files,
the cache entries it saves, the findings. A normal exit then pays twice for memory the
operating system takes back anyway: the cyclic collector scans every object the command made
while it was paused (a young generation of millions, at the first allocation after the
pause), and the interpreter's finalization frees them one by one. On 1,000 Applications that
was about a tenth of the command's wall time (bench/bench_check.py, docs/performance.md).

A command whose process ends with it calls `one_shot()`. When the process is the `headway`
program (`entry.run`, the console script and `python -m headway`), the collector stops for
the rest of the command, what the command hands `keep_until_exit()` (the loaded repository
of `check`) is not freed when the command lets go of it, and `leave()` ends the process
with `os._exit` once it has flushed standard output and error and run every `atexit`
callback (logging's shutdown, finalizers registered with `weakref.finalize`). Anywhere else
(a test's in-process runner, a library caller of `run_check`) `one_shot()` changes nothing
and returns False.

`leave()` takes the ordinary exit instead when the command did not ask for a quick one, when
the exit status is not a number (`SystemExit("message")` prints its message), when a
non-daemon thread is still running (the interpreter would wait for it), or when flushing
fails (a closed pipe: Python's own exit reports it as it always has).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn

__all__ = ["is_program", "keep_until_exit", "leave", "one_shot", "running_as_program"]

_state = {"program": False, "one_shot": False}
_kept: list[object] = []


def running_as_program() -> None:
    """Said by `entry.run`: this process ends when the command it runs does."""
    _state["program"] = True


def is_program() -> bool:
    """Whether `entry.run` said this process is the `headway` program."""
    return _state["program"]


def one_shot() -> bool:
    """Said by a command whose process may end without teardown; True (and the collector is
    off from now on) when the process is the `headway` program."""
    if not _state["program"]:
        return False
    _state["one_shot"] = True
    gc.disable()
    return True


def keep_until_exit(*values: object) -> None:
    """After `one_shot()`: keep `values` alive until the process ends (what a command built
    and is done with, such as a loaded repository, is then never freed object by object).
    Otherwise nothing: they are freed when their last user lets go, as usual."""
    if _state["one_shot"]:
        _kept.extend(values)


def leave(code: object) -> NoReturn:
    """End the process with `code` (a `SystemExit` code): quickly when `one_shot()` was
    said and nothing needs the ordinary exit, else by raising `SystemExit(code)`."""
    status = 0 if code is None else code
    if _state["one_shot"] and isinstance(status, int) and not _threads_running() and _flushed():
        atexit._run_exitfuncs()  # each runs once: the list is empty afterwards
        _flushed()  # what a callback printed
        os._exit(status)
    raise SystemExit(code)


def _threads_running() -> bool:
    import threading  # only when leaving: not a cost of every command's start

    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True
