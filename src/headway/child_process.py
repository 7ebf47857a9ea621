"""Children that never outlive their parent: `PR_SET_PDEATHSIG` for `subprocess` children.

Used by the local runtime for container processes, by the HAProxy router for its HAProxy
and by config management plugins: when the Headway process that started a child dies (even
by SIGKILL), the kernel kills the child too, so no orphan keeps a port or serves stale routes.

Two ways to set it. `behind_setpriv` puts util-linux's `setpriv --pdeathsig KILL` in front
of the command, which sets it and execs the command: nothing of Python's runs in the child,
so it is safe however many threads the parent has (and Python may start it with vfork).
`dies_with_this_process` is a `preexec_fn` doing the same from Python between fork and exec,
which can deadlock in the child when another thread held a lock at the fork; it remains only
as the fallback where setpriv is missing.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
from collections.abc import Callable, Mapping, Sequence

__all__ = ["SETPRIV", "behind_setpriv", "dies_with_this_process", "runnable_behind_setpriv"]

SETPRIV = shutil.which("setpriv")

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


# Resolved once in the parent: the child between fork and exec must not dlopen anything.
_PRCTL = _load_prctl()


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A preexec hook: ask the kernel to SIGKILL the child when its parent goes away."""

    def hook() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return hook


def dies_with_this_process() -> Callable[[], None]:
    """A `preexec_fn` for any child that must never outlive the process starting it."""
    return _die_with_parent(os.getpid())


def behind_setpriv(argv: Sequence[str]) -> list[str] | None:
    """`argv` started through `setpriv --pdeathsig KILL`, or None when setpriv is missing.

    setpriv sets the death signal and then execs `argv`, so the child is `argv[0]` (same
    PID) and dies when the thread that started it does."""
    if SETPRIV is None:
        return None
    return [SETPRIV, "--pdeathsig", "KILL", "--", *argv]


def runnable_behind_setpriv(
    argv: Sequence[str], env: Mapping[str, str], cwd: str
) -> list[str] | None:
    """`behind_setpriv(argv)` when the command will exec (an executable found the way Popen
    looks for it, a working dir that exists); None to start it directly, so that a command
    that cannot start stays Python's OSError instead of setpriv's exit status 127."""
    if SETPRIV is None or not argv or not os.path.isdir(cwd):
        return None
    program = argv[0]
    if os.sep in program:
        found: str | None = os.path.join(cwd, program)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return None
    return behind_setpriv(argv)
