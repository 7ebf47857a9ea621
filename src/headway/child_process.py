"""Children that never outlive their parent: `PR_SET_PDEATHSIG` for `subprocess` children.

Used by the local runtime for container processes and by the HAProxy router for its
HAProxy: when the Headway process that started a child dies (even by SIGKILL), the kernel
kills the child too, so no orphan keeps a port or serves stale routes.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

__all__ = ["dies_with_this_process"]

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
