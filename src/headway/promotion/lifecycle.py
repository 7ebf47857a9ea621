"""One step of a promotion, decided: `decide(ctx) -> Plan`. Purely computational.

A frozen context in (the promotion, its environment's settings, what Git pins, how the
Application runs, the other promotions of the same app and environment, the clock's now),
a plan out: the status to write, at most one action (a commit, a revert, opening an approval,
starting the next environment), events, and when to look again. The controller does the
action, then writes the status; every fact it gathers is read again on the next step, so a
controller killed between the two finds its commit by the promotion's trailer and records it
instead of committing twice.

    Pending ──(gate)──▶ AwaitingApproval ──approve──▶ Committed ──synced──▶ Verifying
       │                     │ deny / deadline              │                  │ live+Healthy
       │                     ▼                              │                  ▼
       │               Denied / TimedOut                    └── aborted / ──▶ Reverting ──▶ Failed
       ▼                                                        deadline                 Succeeded
    Superseded (a newer promotion of the same app+env, or Git pins another image)
    Refused (skips the pipeline without break-glass)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from headway.kubetime import format_precise_time
from headway.promotion.approval import ApprovalOutcome, GateVerdict, judge_gate
from headway.promotion.live import LiveState, LiveVerdict, image_matches
from headway.promotion.record import (
    TERMINAL,
    ApprovalRecord,
    Phase,
    PromotionSpec,
    PromotionStatus,
)

__all__ = ["Action", "ActionKind", "Context", "GitFacts", "Plan", "Queue", "Stage", "decide"]

_QUEUE_LOOK_SECONDS = 10.0
_VERIFY_LOOK_SECONDS = 5.0
_APPROVAL_LOOK_SECONDS = 30.0


@dataclass(frozen=True)
class Stage:
    """The environment's settings, as the pipeline file gives them."""

    environment: str
    application: str
    approval_required: bool = False
    approvers: tuple[str, ...] = ()
    approval_timeout: float = 3600.0
    health_deadline: float = 600.0
    previous: str = ""  # the environment before this one ("" for the first)
    auto_next: str = ""  # the environment to start on success ("" for none)


@dataclass(frozen=True)
class GitFacts:
    pinned: str  # the image (or tag) the environment's file pins at the branch tip
    promotion_commit: str = ""  # a commit carrying this promotion's trailer
    revert_commit: str = ""  # a commit taking that commit back
    config_change: str = ""  # why the change is more than the automation's keys ("" if not)
    exempt: bool = False  # the environment lets automation-only changes skip its gate
    # The environment's file at the tip these facts were read from (a Git blob id): what the
    # classification saw, so an approval and a commit can be bound to exactly that file.
    file_version: str = ""


@dataclass(frozen=True)
class Queue:
    """The other promotions of the same app and environment."""

    older_in_flight: str = ""  # one that committed and is not done yet
    newer: str = ""  # one requested after this one


class ActionKind(StrEnum):
    REQUEST_APPROVAL = "RequestApproval"
    COMMIT = "Commit"
    REVERT = "Revert"
    START_NEXT = "StartNext"


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    image: str = ""  # what to commit (Commit, Revert) or promote (StartNext)
    environment: str = ""  # StartNext: where
    file_version: str = ""  # Commit: only onto this version of the file (what was judged)


@dataclass(frozen=True)
class Context:
    spec: PromotionSpec
    status: PromotionStatus
    stage: Stage
    git: GitFacts
    live: LiveVerdict
    queue: Queue
    synced: bool  # the Application has synced a revision containing the commit
    upstream_passed: bool  # the image succeeded in the previous environment
    now: datetime


@dataclass(frozen=True)
class Plan:
    status: PromotionStatus
    action: Action | None = None
    events: tuple[tuple[str, str, str], ...] = ()  # (type, reason, message)
    requeue_after: float | None = None


def _end(ctx: Context, phase: Phase, message: str, **changes: object) -> Plan:
    warning = phase not in (Phase.SUCCEEDED, Phase.SUPERSEDED)
    status = ctx.status.moved(phase, message, finished_at=ctx.now, **changes)
    event = ("Warning" if warning else "Normal", f"Promotion{phase.value}", message)
    return Plan(status, events=(event,))


def decide(ctx: Context) -> Plan:
    phase = ctx.status.phase
    if phase in TERMINAL:
        return Plan(ctx.status)
    if phase in (Phase.PENDING, Phase.AWAITING_APPROVAL):
        return _before_commit(ctx)
    if phase in (Phase.COMMITTED, Phase.VERIFYING):
        return _verify(ctx)
    return _revert(ctx)


def _before_commit(ctx: Context) -> Plan:
    spec, status = ctx.spec, ctx.status
    if ctx.git.promotion_commit:  # committed by a step that was killed before recording it
        if status.approval is not None:  # the approval that let it through is recorded too
            record, _ = _judged(ctx, status.approval)
            ctx = replace(ctx, status=replace(status, approval=record))
        return _committed(ctx, ctx.git.promotion_commit, "found in history after a restart")
    skips = ctx.stage.previous and ctx.stage.approval_required and not ctx.upstream_passed
    if skips and spec.break_glass is None:
        return _end(
            ctx,
            Phase.REFUSED,
            f"{spec.image} has not succeeded in {ctx.stage.previous}: a promotion to "
            f"{spec.environment} that skips the pipeline needs --break-glass --reason",
        )
    if ctx.queue.newer:
        withdrawn = "; its approval request is withdrawn" if status.approval else ""
        return _end(ctx, Phase.SUPERSEDED, f"superseded by {ctx.queue.newer}{withdrawn}")
    moved = status.approval is not None and status.previous_image != ctx.git.pinned
    if moved and not image_matches(ctx.git.pinned, spec.image):
        return _end(
            ctx,
            Phase.SUPERSEDED,
            f"Git now pins {ctx.git.pinned or 'nothing'} in {spec.environment}, not "
            f"{status.previous_image or 'nothing'} as when approval was requested",
        )
    if ctx.queue.older_in_flight:
        message = f"queued behind {ctx.queue.older_in_flight}"
        return Plan(status.moved(status.phase, message), requeue_after=_QUEUE_LOOK_SECONDS)
    if _needs_approval(ctx):
        return _gate(ctx)
    return _commit(ctx)


def _needs_approval(ctx: Context) -> bool:
    if ctx.spec.break_glass is not None or not ctx.stage.approval_required:
        return False
    if ctx.spec.hotfix_reason:
        return True  # turning analysis off is never exempt
    return not (ctx.git.exempt and not ctx.git.config_change)


def _gate(ctx: Context) -> Plan:
    status = ctx.status
    record = status.approval
    if record is None:
        return _request_approval(ctx, again="")
    if record.file_version != ctx.git.file_version:
        # The approver was asked about another file: what Git holds now needs its own look.
        return _request_approval(ctx, again="the file changed since approval was requested")
    record, outcome = _judged(ctx, record)
    status = replace(status, approval=record)
    if outcome.verdict is GateVerdict.WAITING:
        left = (record.deadline - ctx.now).total_seconds()
        return Plan(
            status.moved(Phase.AWAITING_APPROVAL, outcome.message + _held_for(record.reason)),
            requeue_after=max(0.0, min(left, _APPROVAL_LOOK_SECONDS)),
        )
    if outcome.verdict is GateVerdict.DENIED:
        return _end(replace(ctx, status=status), Phase.DENIED, outcome.message)
    if outcome.verdict is GateVerdict.TIMED_OUT:
        return _end(replace(ctx, status=status), Phase.TIMED_OUT, outcome.message)
    return _commit(replace(ctx, status=status.moved(status.phase, outcome.message)))


def _held_for(reason: str) -> str:
    return f" (config change: {reason})" if reason else ""


def _request_approval(ctx: Context, *, again: str) -> Plan:
    """A new request: its deadline, the reason it is held and the file it is about, kept on
    the record so every later step still says why (an approver reads it there)."""
    spec, status, stage = ctx.spec, ctx.status, ctx.stage
    deadline = ctx.now + timedelta(seconds=stage.approval_timeout)
    record = ApprovalRecord(
        requested_at=ctx.now,
        deadline=deadline,
        reason=ctx.git.config_change,
        file_version=ctx.git.file_version,
        announced=False,
    )
    message = (
        f"{again + ': ' if again else ''}approval requested for {spec.image} in "
        f"{spec.environment}{_held_for(record.reason)}; "
        f"approvers: {', '.join(stage.approvers) or 'none listed'}"
    )
    new = status.moved(
        Phase.AWAITING_APPROVAL, message, approval=record, previous_image=ctx.git.pinned
    )
    # No event in the plan: the controller announces the request once it is recorded
    # (`announced` on the record), so a kill never tells the approvers twice.
    return Plan(
        new,
        Action(ActionKind.REQUEST_APPROVAL, spec.image, spec.environment),
        requeue_after=min(stage.approval_timeout, _APPROVAL_LOOK_SECONDS),
    )


def _judged(ctx: Context, record: ApprovalRecord) -> tuple[ApprovalRecord, ApprovalOutcome]:
    """The gate judged now, and the record that says so (who decided, what was ignored)."""
    outcome = judge_gate(
        ctx.spec.decisions,
        approvers=ctx.stage.approvers,
        author=ctx.spec.author,
        requested_at=record.requested_at,
        deadline=record.deadline,
        now=ctx.now,
    )
    ignored = tuple(f"{i.decision.verdict} by {i.decision.by}: {i.reason}" for i in outcome.ignored)
    record = replace(record, verdict=outcome.verdict.value, ignored=ignored)
    if outcome.decided_by is not None:
        by = outcome.decided_by
        record = replace(
            record, decided_by=by.by, decided_at=format_precise_time(by.at), via=by.via
        )
    return record, outcome


def _committed(ctx: Context, commit: str, how: str) -> Plan:
    status = ctx.status
    previous = status.previous_image or ctx.git.pinned
    message = f"committed {commit[:12]} ({how}); waiting for {ctx.stage.application} to sync it"
    new = status.moved(
        Phase.COMMITTED,
        message,
        commit=commit,
        committed_at=status.committed_at or ctx.now,
        previous_image=previous,
    )
    return Plan(new, requeue_after=0.0)


def _commit(ctx: Context) -> Plan:
    spec, status = ctx.spec, ctx.status
    declared: list[tuple[str, str]] = []  # (event reason, note): recorded, and warned about
    if spec.break_glass is not None:
        glass = spec.break_glass
        declared.append(("BreakGlass", f"break-glass by {glass.by}: {glass.reason}"))
    if spec.hotfix_reason:
        note = f"hotfix by {spec.author} (analysis skipped, nonce {spec.hotfix_nonce}): "
        declared.append(("Hotfix", note + spec.hotfix_reason))
    notes = (*status.notes, *(note for _, note in declared))
    if not spec.hotfix_reason and image_matches(ctx.git.pinned, spec.image):
        message = f"Git already pins {spec.image} in {spec.environment}: nothing to commit"
        new = status.moved(
            Phase.COMMITTED, message, committed_at=ctx.now, previous_image="", notes=notes
        )
        return Plan(new, requeue_after=0.0)
    new = status.moved(
        Phase.COMMITTED,
        f"committing {spec.image} to {spec.environment} (was {ctx.git.pinned or 'unset'})",
        committed_at=ctx.now,
        previous_image=ctx.git.pinned,
        notes=notes,
    )
    events = tuple(("Warning", reason, note) for reason, note in declared)
    action = Action(
        ActionKind.COMMIT, spec.image, spec.environment, file_version=ctx.git.file_version
    )
    return Plan(new, action, events, 0.0)


def _verify(ctx: Context) -> Plan:
    spec, status, stage = ctx.spec, ctx.status, ctx.stage
    if ctx.live.state is LiveState.FAILED:
        return _start_revert(ctx, ctx.live.reason)
    if ctx.git.revert_commit:  # Git convergence took it back first: a failure, not a supersede
        taken = f"{ctx.git.revert_commit[:12]} took the commit back after its rollout failed"
        return _start_revert(ctx, taken)
    if not image_matches(ctx.git.pinned, spec.image):
        return _end(
            ctx,
            Phase.SUPERSEDED,
            f"Git now pins {ctx.git.pinned or 'nothing'} in {spec.environment}: another "
            f"change replaced {spec.image} (not a timeout)",
        )
    if ctx.live.state is LiveState.LIVE:
        return _succeed(ctx)
    started = status.committed_at or ctx.now
    deadline = started + timedelta(seconds=stage.health_deadline)
    if ctx.now >= deadline:
        return _start_revert(
            ctx,
            f"not live and Healthy within {stage.health_deadline:g}s: {ctx.live.reason}",
        )
    phase = Phase.VERIFYING if ctx.synced or status.phase is Phase.VERIFYING else status.phase
    left = (deadline - ctx.now).total_seconds()
    return Plan(
        status.moved(phase, ctx.live.reason),
        requeue_after=max(0.0, min(left, _VERIFY_LOOK_SECONDS)),
    )


def _succeed(ctx: Context) -> Plan:
    plan = _end(ctx, Phase.SUCCEEDED, ctx.live.reason)
    if not ctx.stage.auto_next:
        return plan
    action = Action(ActionKind.START_NEXT, ctx.spec.image, ctx.stage.auto_next)
    return replace(plan, action=action)


def _start_revert(ctx: Context, reason: str) -> Plan:
    message = f"failed: {reason}; re-committing {ctx.status.previous_image or 'nothing'}"
    event = ("Warning", "PromotionFailing", message)
    return Plan(ctx.status.moved(Phase.REVERTING, message), events=(event,), requeue_after=0.0)


def _revert(ctx: Context) -> Plan:
    spec, status = ctx.spec, ctx.status
    why = status.message.removeprefix("failed: ").split("; re-committing", 1)[0]
    stopped = f"pipeline stopped in {spec.environment}: {why}"
    if ctx.git.revert_commit:
        return _end(
            ctx,
            Phase.FAILED,
            f"{stopped}; {ctx.git.revert_commit[:12]} re-committed {status.previous_image}",
            revert_commit=ctx.git.revert_commit,
        )
    if not status.previous_image:
        return _end(ctx, Phase.FAILED, f"{stopped}; no previous image to re-commit")
    marks_left = bool(spec.hotfix_reason)  # a re-commit also takes the hotfix marks out
    if not status.commit or (
        image_matches(ctx.git.pinned, status.previous_image) and not marks_left
    ):
        return _end(ctx, Phase.FAILED, f"{stopped}; Git pins {ctx.git.pinned} again")
    plan = _end(ctx, Phase.FAILED, f"{stopped}; re-committed {status.previous_image}")
    return replace(plan, action=Action(ActionKind.REVERT, status.previous_image, spec.environment))
