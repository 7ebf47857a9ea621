"""`headway app sync --wait` and `headway app wait`: follow an Application in the store.

`wait` follows a requested operation until it ends; `wait_for_state` waits, as `argocd app
wait` does, until the app is Synced, Healthy and/or has no operation in progress.

The operation runs in another process (`headway serve`), so this polls the store. Time and
pauses are passed in, so tests drive it on a virtual clock and step the controller between
polls instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.cli import app_view

__all__ = [
    "NO_CONTROLLER",
    "PICKUP_HINT_SECONDS",
    "WAIT_FAILED",
    "AppState",
    "WaitFor",
    "Waited",
    "app_state",
    "operation_identity",
    "state_reached",
    "wait",
    "wait_for_state",
    "wait_refreshed",
]

NO_CONTROLLER = "no controller picked it up — is `headway serve` running for this state dir?"
# How long a request may wait for a controller before the user is told it might be missing.
PICKUP_HINT_SECONDS = 10.0
POLL_SECONDS = 0.2
# `argocd app wait` ends a timeout or a Degraded transition through its generic error exit.
WAIT_FAILED = 20


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
    from headway.controllers.app import operations as ops

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


# -- `headway app wait`: until the app reaches the states asked for, as `argocd app wait` ----


@dataclass(frozen=True)
class WaitFor:
    """What `app wait` waits for; nothing chosen means sync, health and operation (argocd)."""

    sync: bool = False
    health: bool = False
    operation: bool = False
    suspended: bool = False
    degraded: bool = False

    def or_default(self) -> WaitFor:
        if self.sync or self.health or self.operation or self.suspended or self.degraded:
            return self
        return WaitFor(sync=True, health=True, operation=True)


@dataclass(frozen=True)
class AppState:
    sync: str
    health: str
    operation: str  # the running or last operation's phase; "Requested" while one is pending

    @property
    def line(self) -> str:
        return f"sync={self.sync} health={self.health} operation={self.operation or '-'}"


def app_state(app: Mapping[str, Any]) -> AppState:
    status = app.get("status") or {}
    state = status.get("operationState") or {}
    pending = isinstance(app.get("operation"), dict)
    return AppState(
        sync=str((status.get("sync") or {}).get("status") or "Unknown"),
        health=str((status.get("health") or {}).get("status") or "Unknown"),
        operation="Requested" if pending else str(state.get("phase") or ""),
    )


def _health_passes(health: str, want: WaitFor) -> bool:
    accepted = {"Healthy"} if want.health else set()
    accepted |= {"Suspended"} if want.suspended else set()
    accepted |= {"Degraded"} if want.degraded else set()
    return not accepted or health in accepted


def state_reached(app: Mapping[str, Any], want: WaitFor) -> bool:
    """Whether `app` is in every state `want` asks for (purely computational)."""
    from headway.controllers.app import operations as ops

    state = app_state(app)
    operation_over = not isinstance(app.get("operation"), dict) and not ops.is_running(
        (app.get("status") or {}).get("operationState")
    )
    return (
        (not want.sync or state.sync == "Synced")
        and _health_passes(state.health, want)
        and (not want.operation or operation_over)
    )


def wait_for_state(
    read: Callable[[], Mapping[str, Any]],
    *,
    want: WaitFor,
    timeout: float,
    monotonic: Callable[[], float],
    pause: Callable[[float], None],
    progress: Callable[[str], None],
) -> Waited:
    """Poll `read()` until `state_reached`, or `timeout` seconds (0: no limit). Waiting on
    health fails at once when the app turns Degraded from a known, better health."""
    name = str(read()["metadata"]["name"])
    start, shown = monotonic(), None
    while True:
        app = read()
        state = app_state(app)
        if state_reached(app, want):
            return Waited(0, f"application '{name}' reached the desired state: {state.line}", False)
        previous = shown.health if shown else ""
        turned = previous not in ("", "Unknown", "Degraded") and state.health == "Degraded"
        if want.health and not want.degraded and turned:
            turn = f"health state has transitioned from {previous} to Degraded"
            return Waited(WAIT_FAILED, f"application '{name}' {turn}", True)
        if state != shown:
            progress(state.line)
            shown = state
        if timeout and monotonic() - start >= timeout:
            late = f"timed out ({timeout:g}s) waiting for app '{name}' to match the desired state"
            return Waited(WAIT_FAILED, f"{late} (now {state.line})", True)
        pause(POLL_SECONDS)


def wait_refreshed(
    read: Callable[[], Mapping[str, Any]],
    *,
    timeout: float,
    monotonic: Callable[[], float],
    pause: Callable[[float], None],
) -> bool:
    """Whether the controller took the refresh request (removed the annotation) in time."""
    from headway.controllers.app.names import REFRESH_ANNOTATION

    start = monotonic()
    while REFRESH_ANNOTATION in ((read().get("metadata") or {}).get("annotations") or {}):
        if monotonic() - start >= timeout:
            return False
        pause(POLL_SECONDS)
    return True
