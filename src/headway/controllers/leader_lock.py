"""One controller process per state: the leader lock `headway serve` takes before it starts.

Two controllers over one store would each take operations, run hooks and write reverts, so
the second must refuse to start. `LeaderLock` is the shape any backend fills: `acquire()`
returns once this process leads, or raises `LeadershipHeld` naming the holder; `release()`
gives the lead up.

`StateDirLock` is the local backend's: the exclusive lock `<state-dir>/serve.lock`
(`headway.state_lock.DirLock`, the same kind of lock the local runtime holds on
`runtime.lock`). The kernel drops it when the process ends in any way, SIGKILL included,
so a killed serve never blocks the next one and there is no stale lock to clean up.

On Kubernetes the same role belongs to a `coordination.k8s.io` Lease (renewed by the leader,
taken over when it expires): `lease_lock.LeaseLock`, which `headway serve --kubeconfig`
takes.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Protocol

from headway.state_lock import DirLock, Holder, LockHeld

__all__ = ["LOCK_FILE_NAME", "Holder", "LeaderLock", "LeadershipHeld", "StateDirLock"]

LOCK_FILE_NAME = "serve.lock"

LeadershipHeld = LockHeld  # another process leads; `.holder` says which


class LeaderLock(Protocol):
    def acquire(self) -> None:
        """Lead from now on, or raise `LeadershipHeld` at once (never wait)."""
        ...

    def release(self) -> None:
        """Stop leading; a no-op when not leading."""
        ...


class StateDirLock(DirLock):
    """The leader lock of one local state directory (`<state-dir>/serve.lock`)."""

    def __init__(self, state_dir: Path, *, now: datetime) -> None:
        super().__init__(state_dir, LOCK_FILE_NAME, now=now)
