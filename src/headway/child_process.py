"""Children that never outlive their parent: `PR_SET_PDEATHSIG` for `subprocess` children.

Used by the local runtime for container processes, by the HAProxy router for its HAProxy
and by config management plugins: when the Headway process that started a child dies (even
by SIGKILL), the kernel kills the child too, so no orphan keeps a port or serves stale routes.

`dying_with_parent(argv)` is the command to start instead of `argv`: util-linux's `setpriv
--pdeathsig KILL -- argv`, or where setpriv is missing a small Python program
(`python -I -S -c`) that sets the same signal with `prctl` and then execs `argv`. Either way the
signal is set by a program of its own after the exec of the child, so no Python of the parent
runs between fork and exec: safe however many threads the parent has (a `preexec_fn` there can
deadlock on a lock another thread held at the fork, and forbids a vfork spawn). Neither ever
uses a `preexec_fn`.

setpriv, unlike the fallback, does not look whether its parent died before it set the signal:
a parent killed between the fork and setpriv's `prctl` leaves the command running for good.
`wait_until_armed(pid)` closes that window for a caller that can wait a moment: it returns
once setpriv has exec'd the command (the signal is set by then), so a parent killed any time
after the start returned takes the child with it.

Both report a command they cannot exec as exit status 127, so callers ask `start_error` first:
the `OSError` Popen would raise for it (a missing executable or working dir), to raise as
Python's instead of starting anything.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence

__all__ = ["SETPRIV", "dying_with_parent", "start_error", "wait_until_armed"]

SETPRIV = shutil.which("setpriv")

# Run as `python -I -S -c _REEXEC <parent pid> argv...`: the death signal, a check that the
# parent did not die before it was set (the child would then belong to init), then the exec.
# Without prctl (not Linux) there is no such signal: the command runs all the same.
_REEXEC = """\
import ctypes, os, signal, sys
prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
if prctl is not None:
    prctl(1, signal.SIGKILL, 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as err:
    sys.stderr.write(f"{sys.argv[2]}: {err.strerror}\\n")
    os._exit(127)
"""


def dying_with_parent(argv: Sequence[str]) -> list[str]:
    """The command that runs `argv` (same PID after its exec) with the parent-death signal
    set, so it dies when the thread that started it does: through `SETPRIV`, or the Python
    fallback when it is None."""
    if SETPRIV is not None:
        return [SETPRIV, "--pdeathsig", "KILL", "--", *argv]
    return [sys.executable, "-I", "-S", "-c", _REEXEC, str(os.getpid()), *argv]


def wait_until_armed(pid: int, *, timeout: float = 5.0) -> None:
    """Return once the child `pid`, started with `dying_with_parent`, has its death signal
    set: setpriv has exec'd the command (the child's program is no longer setpriv), or the
    child is gone; at most `timeout` seconds. The Python fallback checks its parent itself,
    so it is not waited for. (A container killed with the runtime right after its start
    survived it under load: tests/cluster/local_runtime/test_process_spawn.py.)"""
    if SETPRIV is None:
        return
    setpriv = os.path.realpath(SETPRIV)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            program = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return  # gone (or no /proc to tell)
        if program != setpriv:
            return
        time.sleep(0.001)


def start_error(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> OSError | None:
    """The OSError Popen would raise starting `argv` in `cwd` with `env` (a working dir or an
    executable that is not there, found the way Popen looks for it), or None when it can
    exec."""
    if not argv:
        return FileNotFoundError(errno.ENOENT, "an empty command")
    if not os.path.isdir(cwd):
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    program = argv[0]
    if os.sep in program:
        found: str | None = os.path.join(cwd, program)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None or not os.path.exists(found):
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if not os.path.isfile(found) or not os.access(found, os.X_OK):
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return None
