"""`headway app sync --wait`: follow a requested operation until it ends.

The operation runs in another process (`headway serve`), so this polls the store. Time and
pauses are passed in, so tests drive it on a virtual clock and step the controller between
polls instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.cli import app_view
from headway.controllers import app_operations as ops

__all__ = ["NO_CONTROLLER", "PICKUP_HINT_SECONDS", "Waited", "operation_identity", "wait"]

NO_CONTROLLER = "no controller picked it up — is `headway serve` running for this state dir?"
# How long a request may wait for a controller before the user is told it might be missing.
PICKUP_HINT_SECONDS = 10.0
POLL_SECONDS = 0.2


@dataclass(frozen=True)
class Waited:
    """How the wait ended: the exit code and the line to print (on stderr unless code 0
    or the operation itself failed)."""

    code: int
    message: str
    error: bool


def operation_identity(app: Mapping[str, Any]) -> tuple[object, object]:
    """What tells one operation state from the next (`operationId` is Headway's own field;
    `startedAt` covers states written without it)."""
    state = (app.get("status") or {}).get("operationState") or {}
    return state.get("operationId"), state.get("startedAt")


def wait(
    read: Callable[[], Mapping[str, Any]],
    *,
    previous: tuple[object, object],
    timeout: float,
    monotonic: Callable[[], float],
    pause: Callable[[float], None],
    progress: Callable[[str], None],
) -> Waited:
    """Poll `read()` until the operation requested after the state `previous` ends; each
    change of its phase or message goes to `progress`. `timeout` 0 waits without limit."""
    start = monotonic()
    shown, hinted = "", False
    while True:
        app = read()
        state = (app.get("status") or {}).get("operationState") or {}
        started = "operation" not in app and operation_identity(app) != previous
        if "operation" not in app and not started:
            return Waited(1, "the requested operation was withdrawn before it started", True)
        if started:
            line = app_view.describe_state(state)
            if not ops.is_running(state):
                return Waited(0 if state.get("phase") == "Succeeded" else 1, line, False)
            if line != shown:
                progress(line)
                shown = line
        waited = monotonic() - start
        if timeout and waited >= timeout:
            return _timed_out(timeout, shown if started else None)
        if not started and not hinted and waited >= PICKUP_HINT_SECONDS:
            progress(f"still waiting after {waited:.0f}s: {NO_CONTROLLER}")
            hinted = True
        pause(POLL_SECONDS)


def _timed_out(timeout: float, running: str | None) -> Waited:
    if running is None:
        return Waited(1, f"the operation did not start within {timeout:g}s: {NO_CONTROLLER}", True)
    return Waited(1, f"the operation did not finish within {timeout:g}s (now {running})", True)
