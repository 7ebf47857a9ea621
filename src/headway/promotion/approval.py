"""Judging an approval gate from the decisions recorded on a promotion. Purely computational.

The gate fails closed: it opens only on an explicit `approve` from someone on the
environment's allow-list who is not the author of the change, made between the request and
its deadline. A `deny` from an allow-listed approver closes it; so does the deadline passing
with no valid decision. A decision that does not count (an approver not on the list, the
author approving their own change, a decision after the deadline) is kept, with the reason
it was ignored, so the record shows every attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "ApprovalOutcome",
    "Decision",
    "GateVerdict",
    "Ignored",
    "judge_gate",
    "same_identity",
    "why_not_counted",
]


class GateVerdict(StrEnum):
    WAITING = "Waiting"
    APPROVED = "Approved"
    DENIED = "Denied"
    TIMED_OUT = "TimedOut"


@dataclass(frozen=True)
class Decision:
    """One approve or deny, as recorded: who, when, through what (cli, forge)."""

    verdict: str  # "approve" | "deny"
    by: str
    at: datetime
    via: str = "cli"
    comment: str = ""


@dataclass(frozen=True)
class Ignored:
    decision: Decision
    reason: str


@dataclass(frozen=True)
class ApprovalOutcome:
    verdict: GateVerdict
    decided_by: Decision | None
    ignored: tuple[Ignored, ...]
    message: str


def same_identity(a: str, b: str) -> bool:
    """Identities compare without case or surrounding space (`Alice@x.io` is `alice@x.io`)."""
    return bool(a.strip()) and a.strip().casefold() == b.strip().casefold()


def why_not_counted(
    decision: Decision,
    *,
    approvers: tuple[str, ...],
    author: str,
    requested_at: datetime,
    deadline: datetime,
) -> str | None:
    """Why `decision` does not count at this gate, or None when it does."""
    if decision.verdict not in ("approve", "deny"):
        return f"unknown decision {decision.verdict!r} (approve or deny)"
    if not any(same_identity(decision.by, a) for a in approvers):
        listed = ", ".join(approvers) or "nobody"
        return f"{decision.by or 'an unnamed user'} is not an approver here (approvers: {listed})"
    if decision.verdict == "approve" and same_identity(decision.by, author):
        return f"{decision.by} is the author of this change and cannot approve it"
    if decision.at < requested_at:
        return "made before the approval was requested"
    if decision.at >= deadline:
        return "made after the approval deadline"
    return None


def judge_gate(
    decisions: tuple[Decision, ...],
    *,
    approvers: tuple[str, ...],
    author: str,
    requested_at: datetime,
    deadline: datetime,
    now: datetime,
) -> ApprovalOutcome:
    """The gate's verdict: the first decision that counts, in time order, settles it."""
    ignored: list[Ignored] = []
    for decision in sorted(decisions, key=lambda d: d.at):
        reason = why_not_counted(
            decision,
            approvers=approvers,
            author=author,
            requested_at=requested_at,
            deadline=deadline,
        )
        if reason is not None:
            ignored.append(Ignored(decision, reason))
            continue
        approved = decision.verdict == "approve"
        verdict = GateVerdict.APPROVED if approved else GateVerdict.DENIED
        word = "approved" if approved else "denied"
        return ApprovalOutcome(
            verdict, decision, tuple(ignored), f"{word} by {decision.by} via {decision.via}"
        )
    if now >= deadline:
        message = "no decision from an approver before the deadline: denied (fails closed)"
        return ApprovalOutcome(GateVerdict.TIMED_OUT, None, tuple(ignored), message)
    waiting_for = ", ".join(approvers) if approvers else "nobody (no approvers listed)"
    message = f"waiting for approve/deny from {waiting_for}"
    return ApprovalOutcome(GateVerdict.WAITING, None, tuple(ignored), message)
