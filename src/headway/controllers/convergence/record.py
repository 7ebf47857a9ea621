"""How a Git convergence outcome is recorded: the annotation (read back so an abort is handled
once), the Event reason, and the `GitConvergence` status condition. Pure.

The annotation names the abort it answers (pod hash, `abortedAt`, failed run): the same image
released again and aborted again is a new abort with the same pod hash, and must be looked
at again (issue 16, item 4)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from headway.controllers.convergence.facts import AbortIdentity
from headway.controllers.convergence.revert import RevertOutcome, RevertResult
from headway.kubetime import format_time
from headway.redaction import redact_url_credentials

__all__ = ["CONDITION_TYPE", "STATE_ANNOTATION", "ConvergenceState", "condition_for", "read_state"]

STATE_ANNOTATION = "headway.dev/git-convergence"
CONDITION_TYPE = "GitConvergence"

_EVENT_REASONS = {
    "Reverted": "GitReverted",
    "AlreadyReverted": "GitRevertFound",
    "Refused": "GitRevertFailed",
    "Disabled": "GitRevertDisabled",
}


@dataclass(frozen=True)
class ConvergenceState:
    """What happened for one abort of a failed pod-template hash."""

    pod_hash: str
    result: str  # Reverted | AlreadyReverted | Refused | Disabled
    message: str
    commits: tuple[str, ...] = ()
    revert_of: tuple[str, ...] = ()
    aborted_at: str = ""
    analysis_run: str = ""

    def for_abort(self, abort: AbortIdentity) -> ConvergenceState:
        return replace(
            self,
            pod_hash=abort.pod_hash,
            aborted_at=abort.aborted_at,
            analysis_run=abort.analysis_run,
        )

    def masked(self) -> ConvergenceState:
        """The record with credentials in URLs (a repoURL in a message) masked."""
        return replace(self, message=redact_url_credentials(self.message))

    def answers(self, abort: AbortIdentity) -> bool:
        """This record is the outcome of that abort (so it is not handled again)."""
        return (self.pod_hash, self.aborted_at, self.analysis_run) == (
            abort.pod_hash,
            abort.aborted_at,
            abort.analysis_run,
        )

    @classmethod
    def disabled(cls, pod_hash: str, app: dict[str, Any]) -> ConvergenceState:
        name = app["metadata"]["name"]
        return cls(
            pod_hash,
            "Disabled",
            f"Application {name} does not revert Git on abort (no automated sync, or "
            'headway.dev/revert-on-abort: "false"); Git still names the failed revision',
        )

    @classmethod
    def refused(cls, pod_hash: str, reason: str) -> ConvergenceState:
        return cls(pod_hash, "Refused", f"cannot revert the failed revision in Git: {reason}")

    @classmethod
    def from_outcome(cls, pod_hash: str, outcome: RevertOutcome) -> ConvergenceState:
        if outcome.result is RevertResult.REFUSED:
            return cls.refused(pod_hash, outcome.message)
        return cls(
            pod_hash, outcome.result.value, outcome.message, outcome.commits, outcome.revert_of
        )

    @property
    def is_failure(self) -> bool:
        return self.result == "Refused"

    @property
    def event_reason(self) -> str:
        return _EVENT_REASONS.get(self.result, "GitConvergence")

    def as_json(self) -> dict[str, Any]:
        return {
            "podHash": self.pod_hash,
            "result": self.result,
            "message": self.message,
            "commits": list(self.commits),
            "revertOf": list(self.revert_of),
            "abortedAt": self.aborted_at,
            "analysisRun": self.analysis_run,
        }


def read_state(obj: dict[str, Any]) -> ConvergenceState | None:
    """The recorded outcome on an object, None when absent or unreadable."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(STATE_ANNOTATION)
    if not isinstance(text, str):
        return None
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict) or not raw.get("podHash"):
        return None
    return ConvergenceState(
        pod_hash=str(raw["podHash"]),
        result=str(raw.get("result") or ""),
        message=str(raw.get("message") or ""),
        commits=tuple(str(c) for c in raw.get("commits") or []),
        revert_of=tuple(str(c) for c in raw.get("revertOf") or []),
        aborted_at=str(raw.get("abortedAt") or ""),
        analysis_run=str(raw.get("analysisRun") or ""),
    )


def condition_for(state: ConvergenceState, now: datetime) -> dict[str, Any]:
    """A Rollout status condition in Argo Rollouts' shape."""
    stamp = format_time(now)
    converged = state.result in ("Reverted", "AlreadyReverted")
    return {
        "type": CONDITION_TYPE,
        "status": "True" if converged else "False",
        "reason": _EVENT_REASONS.get(state.result, state.result),
        "message": state.message,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }
