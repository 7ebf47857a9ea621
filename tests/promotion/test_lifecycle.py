"""The promotion state machine, step by step on a virtual clock: gates, commits, verification,
supersession, failure and re-commit of the previous image, resume from a recorded commit."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from headway.clock import EPOCH
from headway.promotion.approval import Decision
from headway.promotion.lifecycle import (
    ActionKind,
    Context,
    GitFacts,
    Plan,
    Queue,
    Stage,
    decide,
)
from headway.promotion.live import LiveState, LiveVerdict
from headway.promotion.record import BreakGlass, Phase, PromotionSpec, PromotionStatus

PROD = Stage(
    environment="prod",
    application="web-prod",
    approval_required=True,
    approvers=("lead@x.io",),
    approval_timeout=3600,
    health_deadline=600,
    previous="staging",
)
SPEC = PromotionSpec(
    name="web-prod-1",
    namespace="argocd",
    pipeline="web",
    environment="prod",
    image="v2",
    author="dev@x.io",
    requested_at=EPOCH,
)
WAITING = LiveVerdict(LiveState.WAITING, "Application web-prod does not run v2 yet")


def _ctx(**changes: object) -> Context:
    base = Context(
        spec=SPEC,
        status=PromotionStatus(),
        stage=PROD,
        git=GitFacts(pinned="v1"),
        live=WAITING,
        queue=Queue(),
        synced=False,
        upstream_passed=True,
        now=EPOCH,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def _after(plan: Plan, ctx: Context, seconds: float, **changes: object) -> Context:
    """The next step's context: the plan's status persisted, time moved on."""
    return replace(ctx, status=plan.status, now=ctx.now + timedelta(seconds=seconds), **changes)  # type: ignore[arg-type]


def _approve(ctx: Context, by: str, seconds: float, verdict: str = "approve") -> Context:
    decision = Decision(verdict, by, ctx.now + timedelta(seconds=seconds))
    spec = replace(ctx.spec, decisions=(*ctx.spec.decisions, decision))
    return replace(ctx, spec=spec, now=ctx.now + timedelta(seconds=seconds))


def test_a_gated_promotion_asks_once_then_commits_after_approval() -> None:
    ctx = _ctx()
    plan = decide(ctx)
    assert plan.status.phase is Phase.AWAITING_APPROVAL
    assert plan.action is not None and plan.action.kind is ActionKind.REQUEST_APPROVAL
    assert plan.status.approval is not None
    assert plan.status.approval.deadline == EPOCH + timedelta(hours=1)
    waiting = decide(_after(plan, ctx, 10))
    assert waiting.action is None and waiting.status.phase is Phase.AWAITING_APPROVAL
    approved = decide(_approve(_after(waiting, ctx, 10), "lead@x.io", 30))
    assert approved.action is not None and approved.action.kind is ActionKind.COMMIT
    assert approved.status.phase is Phase.COMMITTED
    assert approved.status.previous_image == "v1"
    assert approved.status.approval is not None
    assert approved.status.approval.decided_by == "lead@x.io"


def test_self_approval_never_commits_and_the_deadline_denies() -> None:
    ctx = _ctx()
    plan = decide(ctx)
    ctx = _approve(_after(plan, ctx, 0), "dev@x.io", 5)
    ctx = replace(ctx, stage=replace(PROD, approvers=("lead@x.io", "dev@x.io")))
    held = decide(ctx)
    assert held.action is None and held.status.phase is Phase.AWAITING_APPROVAL
    assert held.status.approval is not None
    assert "cannot approve" in held.status.approval.ignored[0]
    late = decide(_after(held, ctx, 3600))
    assert late.status.phase is Phase.TIMED_OUT
    assert late.action is None


def test_a_deny_ends_it_denied() -> None:
    ctx = _ctx()
    plan = decide(ctx)
    denied = decide(_approve(_after(plan, ctx, 0), "lead@x.io", 5, "deny"))
    assert denied.status.phase is Phase.DENIED
    assert denied.action is None


def test_a_newer_promotion_supersedes_a_waiting_one_and_withdraws_its_approval() -> None:
    ctx = _ctx()
    plan = decide(ctx)
    ctx = _approve(_after(plan, ctx, 0, queue=Queue(newer="web-prod-2")), "lead@x.io", 5)
    superseded = decide(ctx)
    assert superseded.status.phase is Phase.SUPERSEDED
    assert "withdrawn" in superseded.status.message
    assert superseded.action is None


def test_git_pinning_another_image_while_waiting_is_superseded_not_timed_out() -> None:
    ctx = _ctx()
    plan = decide(ctx)
    later = _after(plan, ctx, 4000, git=GitFacts(pinned="v3"))
    outcome = decide(later)
    assert outcome.status.phase is Phase.SUPERSEDED
    assert "v3" in outcome.status.message


def test_a_newer_promotion_waits_behind_one_in_flight() -> None:
    plan = decide(_ctx(queue=Queue(older_in_flight="web-prod-0")))
    assert plan.status.phase is Phase.PENDING and plan.action is None
    assert "queued behind web-prod-0" in plan.status.message


def test_skipping_the_pipeline_is_refused_without_break_glass() -> None:
    refused = decide(_ctx(upstream_passed=False))
    assert refused.status.phase is Phase.REFUSED
    assert "--break-glass" in refused.status.message
    glass = replace(SPEC, break_glass=BreakGlass("oncall@x.io", "prod is down"))
    plan = decide(_ctx(upstream_passed=False, spec=glass))
    assert plan.action is not None and plan.action.kind is ActionKind.COMMIT
    assert plan.status.notes == ("break-glass by oncall@x.io: prod is down",)
    assert any(reason == "BreakGlass" for _, reason, _ in plan.events)


def test_an_exempt_change_skips_the_gate_but_a_config_change_is_held() -> None:
    exempt = decide(_ctx(git=GitFacts(pinned="v1", exempt=True)))
    assert exempt.action is not None and exempt.action.kind is ActionKind.COMMIT
    held = decide(_ctx(git=GitFacts(pinned="v1", exempt=True, config_change="env.LOG_LEVEL")))
    assert held.status.phase is Phase.AWAITING_APPROVAL
    assert "config change: env.LOG_LEVEL" in held.status.message


def _committed(**changes: object) -> Context:
    ungated = replace(PROD, approval_required=False, auto_next="")
    ctx = _ctx(stage=ungated, **changes)
    plan = decide(ctx)
    status = replace(plan.status, commit="abc123")
    return replace(ctx, status=status, git=GitFacts(pinned="v2", promotion_commit="abc123"))


def test_success_is_live_and_healthy_then_the_next_environment_starts() -> None:
    ctx = _committed()
    ctx = replace(ctx, stage=replace(ctx.stage, auto_next="dr"))
    assert decide(replace(ctx, synced=True)).status.phase is Phase.VERIFYING
    live = LiveVerdict(LiveState.LIVE, "Application web-prod runs v2 and is Healthy")
    done = decide(replace(ctx, live=live, now=EPOCH + timedelta(seconds=30)))
    assert done.status.phase is Phase.SUCCEEDED
    assert done.action is not None and done.action.kind is ActionKind.START_NEXT
    assert done.action.environment == "dr"


def test_an_aborted_rollout_reverts_to_the_previous_image_and_stops() -> None:
    ctx = _committed()
    aborted = LiveVerdict(LiveState.FAILED, "Rollout web aborted: analysis failed")
    failing = decide(replace(ctx, live=aborted))
    assert failing.status.phase is Phase.REVERTING
    revert = decide(replace(ctx, status=failing.status, live=aborted))
    assert revert.action is not None and revert.action.kind is ActionKind.REVERT
    assert revert.action.image == "v1"
    assert revert.status.phase is Phase.FAILED
    assert "pipeline stopped in prod: Rollout web aborted" in revert.status.message


def test_a_revert_already_in_history_is_recorded_not_repeated() -> None:
    ctx = _committed()
    failing = decide(replace(ctx, live=LiveVerdict(LiveState.FAILED, "aborted")))
    git = GitFacts(pinned="v1", promotion_commit="abc123", revert_commit="def456")
    done = decide(replace(ctx, status=failing.status, git=git))
    assert done.action is None
    assert done.status.phase is Phase.FAILED and done.status.revert_commit == "def456"


def test_not_healthy_within_the_deadline_fails_and_reverts() -> None:
    ctx = _committed()
    assert decide(replace(ctx, now=EPOCH + timedelta(seconds=599))).status.phase in (
        Phase.COMMITTED,
        Phase.VERIFYING,
    )
    late = decide(replace(ctx, now=EPOCH + timedelta(seconds=600)))
    assert late.status.phase is Phase.REVERTING
    assert "within 600s" in late.status.message


def test_a_commit_found_in_history_is_recorded_instead_of_committed_again() -> None:
    ctx = _ctx(stage=replace(PROD, approval_required=False))
    plan = decide(replace(ctx, git=GitFacts(pinned="v2", promotion_commit="abc123")))
    assert plan.action is None
    assert plan.status.phase is Phase.COMMITTED and plan.status.commit == "abc123"


def test_git_moving_off_the_image_while_verifying_is_superseded() -> None:
    ctx = _committed()
    moved = decide(replace(ctx, git=GitFacts(pinned="v3")))
    assert moved.status.phase is Phase.SUPERSEDED
    assert "not a timeout" in moved.status.message


def test_a_hotfix_commits_the_same_tag_is_gated_and_recorded() -> None:
    hotfix = replace(SPEC, image="v1", hotfix_reason="relayer stuck")
    exempt = GitFacts(pinned="v1", exempt=True)
    held = decide(_ctx(spec=hotfix, git=exempt))
    assert held.status.phase is Phase.AWAITING_APPROVAL  # skipping analysis is never exempt
    ungated = decide(_ctx(spec=hotfix, git=exempt, stage=replace(PROD, approval_required=False)))
    assert ungated.action is not None and ungated.action.kind is ActionKind.COMMIT
    assert any(reason == "Hotfix" for _, reason, _ in ungated.events)
    assert "relayer stuck" in ungated.status.notes[-1]
    same = decide(_ctx(git=GitFacts(pinned="v2"), stage=replace(PROD, approval_required=False)))
    assert same.action is None  # a normal promotion of the pinned image commits nothing


def test_a_revert_by_git_convergence_seen_after_the_sync_back_is_still_a_failure() -> None:
    ctx = _committed()
    reverted = GitFacts(pinned="v1", promotion_commit="abc123", revert_commit="def456")
    healthy_again = LiveVerdict(LiveState.WAITING, "Application web-prod does not run v2")
    failing = decide(replace(ctx, git=reverted, live=healthy_again))
    assert failing.status.phase is Phase.REVERTING
    done = decide(replace(ctx, status=failing.status, git=reverted))
    assert done.status.phase is Phase.FAILED and done.action is None
    assert done.status.revert_commit == "def456"


def test_the_gate_keeps_its_reason_and_asks_again_when_the_file_changes_under_it() -> None:
    held = GitFacts(pinned="v1", exempt=True, config_change="env.A", file_version="blob-1")
    ctx = _ctx(git=held)
    plan = decide(ctx)
    assert plan.status.approval is not None and plan.status.approval.file_version == "blob-1"
    waiting = decide(_after(plan, ctx, 10))
    assert waiting.status.message == (
        "waiting for approve/deny from lead@x.io (config change: env.A)"
    )
    moved = replace(held, config_change="env.A; env.B", file_version="blob-2")
    again = decide(_approve(_after(waiting, ctx, 10, git=moved), "lead@x.io", 5))
    assert again.action is not None and again.action.kind is ActionKind.REQUEST_APPROVAL
    assert again.status.approval is not None and again.status.approval.file_version == "blob-2"
    assert again.status.message.startswith("the file changed since approval was requested")
    ctx = _approve(_after(again, ctx, 10, git=moved), "lead@x.io", 5)
    approved = decide(ctx)
    assert approved.action is not None and approved.action.kind is ActionKind.COMMIT
    assert approved.action.file_version == "blob-2"  # committed only onto what was approved
