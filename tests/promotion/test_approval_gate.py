"""The approval gate fails closed: only an allow-listed approver who is not the author opens it,
in time; a deny or the deadline closes it; every ignored attempt is kept with its reason."""

from __future__ import annotations

from datetime import timedelta

from headway.clock import EPOCH
from headway.promotion.approval import ApprovalOutcome, Decision, GateVerdict, judge_gate

REQUESTED = EPOCH
DEADLINE = EPOCH + timedelta(hours=1)


def _judge(
    *decisions: Decision, now_after: float = 60.0, author: str = "dev@x.io"
) -> ApprovalOutcome:
    return judge_gate(
        decisions,
        approvers=("Lead@x.io", "sre@x.io"),
        author=author,
        requested_at=REQUESTED,
        deadline=DEADLINE,
        now=REQUESTED + timedelta(seconds=now_after),
    )


def test_an_allow_listed_approver_opens_the_gate() -> None:
    outcome = _judge(Decision("approve", "lead@x.io", REQUESTED + timedelta(seconds=5)))
    assert outcome.verdict is GateVerdict.APPROVED
    assert outcome.decided_by is not None and outcome.decided_by.by == "lead@x.io"


def test_no_decision_waits_until_the_deadline_then_times_out() -> None:
    assert _judge(now_after=3599).verdict is GateVerdict.WAITING
    outcome = _judge(now_after=3600)
    assert outcome.verdict is GateVerdict.TIMED_OUT
    assert "fails closed" in outcome.message


def test_the_author_cannot_approve_their_own_change() -> None:
    outcome = _judge(
        Decision("approve", "sre@x.io", REQUESTED + timedelta(seconds=5)), author="SRE@x.io"
    )
    assert outcome.verdict is GateVerdict.WAITING
    assert "author of this change" in outcome.ignored[0].reason


def test_someone_off_the_list_is_ignored_and_recorded() -> None:
    outcome = _judge(Decision("approve", "mallory@x.io", REQUESTED + timedelta(seconds=5)))
    assert outcome.verdict is GateVerdict.WAITING
    assert "not an approver" in outcome.ignored[0].reason


def test_a_deny_closes_the_gate_and_the_first_valid_decision_wins() -> None:
    outcome = _judge(
        Decision("approve", "mallory@x.io", REQUESTED + timedelta(seconds=1)),
        Decision("approve", "lead@x.io", REQUESTED + timedelta(seconds=9)),
        Decision("deny", "sre@x.io", REQUESTED + timedelta(seconds=4)),
    )
    assert outcome.verdict is GateVerdict.DENIED
    assert outcome.decided_by is not None and outcome.decided_by.by == "sre@x.io"
    assert len(outcome.ignored) == 1


def test_a_decision_after_the_deadline_does_not_count() -> None:
    late = Decision("approve", "lead@x.io", DEADLINE + timedelta(seconds=1))
    outcome = _judge(late, now_after=4000)
    assert outcome.verdict is GateVerdict.TIMED_OUT
    assert "after the approval deadline" in outcome.ignored[0].reason


def test_no_approvers_listed_can_only_time_out() -> None:
    outcome = judge_gate(
        (Decision("approve", "lead@x.io", REQUESTED + timedelta(seconds=5)),),
        approvers=(),
        author="dev@x.io",
        requested_at=REQUESTED,
        deadline=DEADLINE,
        now=DEADLINE,
    )
    assert outcome.verdict is GateVerdict.TIMED_OUT
