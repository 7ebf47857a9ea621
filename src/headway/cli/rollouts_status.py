"""`headway rollouts status NAME`: wait for a Rollout to end, for CI, as kubectl-argo-rollouts.

The plugin's contract, which scripts rely on:

* it prints `STATUS - MESSAGE` (just `STATUS` without a message) whenever that line changes;
* it ends at Healthy (exit 0) or Degraded (exit 1, "The rollout is in a degraded state with
  message: ..."); Paused and Progressing keep it waiting;
* `--timeout` (0: no limit) ends the wait with exit 1, "Rollout status watch exceeded timeout";
* `--watch=false` prints the line once and exits 1 only when Degraded.

The status is the controller's (`status.phase`, `status.message`), except while the
controller has not yet seen the latest spec: then it is Progressing, "waiting for rollout
spec update to be observed", so a CI job that just applied a new image never reads the
previous revision's Healthy. Time and pauses are passed in, so tests drive it step by step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "RolloutStatus", "rollout_status", "watch_status"]

POLL_SECONDS = 0.5
DONE = ("Healthy", "Degraded")


@dataclass(frozen=True)
class RolloutStatus:
    status: str
    message: str

    @property
    def line(self) -> str:
        return f"{self.status} - {self.message}" if self.message else self.status


@dataclass(frozen=True)
class Outcome:
    """How the command ends: its exit code and, on failure, the error to print."""

    code: int
    error: str = ""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def rollout_status(obj: Mapping[str, Any]) -> RolloutStatus:
    """The status line of a Rollout object (purely computational)."""
    meta, status = _mapping(obj.get("metadata")), _mapping(obj.get("status"))
    observed = str(status.get("observedGeneration") or "")
    if observed and observed != str(meta.get("generation") or observed):
        return RolloutStatus("Progressing", "waiting for rollout spec update to be observed")
    phase = str(status.get("phase") or "")
    if not phase:
        return RolloutStatus("Progressing", "waiting for the controller to report a status")
    return RolloutStatus(phase, str(status.get("message") or ""))


def final_outcome(state: RolloutStatus, *, watched: bool) -> Outcome:
    if state.status == "Degraded":
        return Outcome(1, f"The rollout is in a degraded state with message: {state.message}")
    if watched and state.status != "Healthy":
        return Outcome(1, "Rollout status watch exceeded timeout")
    return Outcome(0)


def watch_status(
    read: Callable[[], Mapping[str, Any]],
    *,
    timeout: float,
    monotonic: Callable[[], float],
    pause: Callable[[float], None],
    show: Callable[[str], None],
) -> Outcome:
    """Poll `read()` until the Rollout is Healthy or Degraded, or `timeout` seconds (0: no
    limit) have passed; each new status line goes to `show`."""
    start, shown = monotonic(), ""
    while True:
        state = rollout_status(read())
        if state.line != shown:
            show(state.line)
            shown = state.line
        if state.status in DONE or (timeout and monotonic() - start >= timeout):
            return final_outcome(state, watched=True)
        pause(POLL_SECONDS)
