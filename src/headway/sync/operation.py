"""One step of a sync operation, decided: `decide(ctx) -> Action`. Purely computational.

The executor (`controllers/app/sync_executor.py`) reads the state and the plan, asks `decide` what
the next unit of work is, does it (the only I/O), and hands what happened back to one of the
pure transitions below, which return the next state (`Continue`) or the end (`Finish`):

1. a `Terminating` operation is terminated (`Terminate`);
2. a plan that cannot be made ends the operation in Error, a plan with problems fails it;
3. before anything is applied, every object is dry-run (`DryRun`, then `after_dry_run`);
4. then per (phase, wave) step, in order: apply it (`ApplyWave`, then `after_apply`), and on
   a later call judge it with `wave_gate` (`JudgeWave`, then `after_judge`); the last step is
   not judged when `ends_at_apply` says so (Argo CD's rule);
5. when no step is left, the operation succeeded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from headway.health import HealthResult, HealthStatus
from headway.model.obj import Obj
from headway.sync.gate import GateVerdict, ends_at_apply, wave_gate
from headway.sync.hooks import DeletePolicy
from headway.sync.operation_state import (
    OperationPhase,
    OperationState,
    ResourceResult,
    WaveCursor,
)
from headway.sync.plan import SyncPlan, WaveStep
from headway.sync.resources import ResourceKey
from headway.sync.tasks import SyncTask

__all__ = [
    "Action",
    "ApplyWave",
    "Continue",
    "DryRun",
    "Finish",
    "JudgeWave",
    "OperationContext",
    "Terminate",
    "after_apply",
    "after_dry_run",
    "after_judge",
    "decide",
    "finished",
    "hooks_to_delete",
    "terminated",
    "waiting_for_hook",
]

Assess = Callable[[Obj], HealthResult | None]

# How soon to look again at a wave that waits on health (watch events wake sooner).
WAIT_SECONDS = 2.0

_BEFORE_EVERY_STEP = (-99, -(10**9))


@dataclass(frozen=True)
class OperationContext:
    """What `decide` looks at: the state, the plan (or why there is none) and the live objects
    the comparison read."""

    state: OperationState
    plan: SyncPlan | None
    plan_error: str = ""
    live: Mapping[ResourceKey, Obj] | None = None


@dataclass(frozen=True)
class Terminate:
    """Delete the running hooks; the operation fails as terminated."""


@dataclass(frozen=True)
class Finish:
    """End the operation from `state`: create the `sync_fail_hooks` first and mark them run
    (None: not now — a success, no plan, or they already ran; an empty tuple still marks
    them), delete the hooks whose delete policy says so, then `finished()`."""

    state: OperationState
    phase: OperationPhase
    message: str
    sync_fail_hooks: tuple[WaveStep, ...] | None = None


@dataclass(frozen=True)
class DryRun:
    """Dry-run these tasks; nothing is applied if any fails."""

    tasks: tuple[SyncTask, ...]


@dataclass(frozen=True)
class ApplyWave:
    """Apply one step: its prunes, then its applies and hooks, in order."""

    step: WaveStep


@dataclass(frozen=True)
class JudgeWave:
    """Judge an applied step, after running the prunes confirmed since it was applied."""

    step: WaveStep
    late_prunes: tuple[SyncTask, ...] = ()


@dataclass(frozen=True)
class Continue:
    """The operation goes on: persist `state`, look again after `requeue_after` seconds."""

    state: OperationState
    requeue_after: float


Action = Terminate | Finish | DryRun | ApplyWave | JudgeWave


def _failure(plan: SyncPlan | None, state: OperationState, message: str) -> Finish:
    hooks = None if plan is None or state.sync_fail_hooks_run else plan.failure_waves()
    return Finish(state, OperationPhase.FAILED, message, sync_fail_hooks=hooks)


def decide(ctx: OperationContext) -> Action:
    """The next unit of work of the running operation in `ctx.state`."""
    state, plan = ctx.state, ctx.plan
    if state.phase is OperationPhase.TERMINATING:
        return Terminate()
    if plan is None:  # Argo CD's phase for an operation that could not run
        return Finish(state, OperationPhase.ERROR, f"cannot plan the sync: {ctx.plan_error}")
    if plan.problems:
        return _failure(plan, state, "; ".join(plan.problems))
    if not state.dry_run_done:
        return DryRun(_dry_run_tasks(plan))
    return _next_wave(ctx, plan)


def _dry_run_tasks(plan: SyncPlan) -> tuple[SyncTask, ...]:
    """Every object to apply, except those in a namespace the plan itself creates."""
    created = {t.key.name for t in plan.tasks if t.key.kind == "Namespace" and not t.is_prune}
    return tuple(
        task
        for task in plan.tasks
        if not (task.is_prune or task.target is None or task.key.namespace in created)
    )


def _next_wave(ctx: OperationContext, plan: SyncPlan) -> Action:
    cursor = ctx.state.wave
    here = cursor.position if cursor else _BEFORE_EVERY_STEP
    for step in plan.waves():
        position = (step.phase.order, step.wave)
        if position < here or (position == here and cursor is not None and cursor.passed):
            continue
        if position == here and cursor is not None and cursor.applied:
            if ends_at_apply(step, plan=plan):
                break
            return JudgeWave(step, _late_prunes(step, ctx.live or {}))
        return ApplyWave(step)
    return Finish(ctx.state, OperationPhase.SUCCEEDED, "successfully synced (all tasks run)")


def _late_prunes(step: WaveStep, live: Mapping[ResourceKey, Obj]) -> tuple[SyncTask, ...]:
    """Prunes confirmed (or to retry) since the step was applied: still live, not deleting."""
    return tuple(
        task
        for task in step.prunes
        if task.runs
        and task.key in live
        and (live[task.key].get("metadata") or {}).get("deletionTimestamp") is None
    )


def after_dry_run(
    state: OperationState, plan: SyncPlan, errors: Sequence[str]
) -> Continue | Finish:
    if errors:
        message = "one or more objects failed to apply (dry run): " + "; ".join(errors)
        return _failure(plan, state, message)
    done = replace(state, dry_run_done=True)
    if state.request.dry_run:
        return Finish(done, OperationPhase.SUCCEEDED, "dry run succeeded; nothing applied")
    return Continue(replace(done, message=f"dry run of {len(plan.tasks)} tasks passed"), 0.0)


def waiting_for_hook(state: OperationState, step: WaveStep, task: SyncTask) -> Continue:
    """A hook cannot be created again until its previous instance is gone."""
    message = f"{step}: waiting for the previous {task.key} to be deleted"
    return Continue(replace(state, message=message), WAIT_SECONDS)


def after_apply(
    state: OperationState, plan: SyncPlan, step: WaveStep, results: Sequence[ResourceResult]
) -> Continue | Finish:
    """The results recorded and the step marked applied; a failed task fails the operation."""
    cursor = WaveCursor(step.phase, step.wave, applied=True)
    applied = replace(state.recorded(results), wave=cursor)
    failed = [r for r in results if r.failed]
    if failed:
        detail = "; ".join(f"{r.key}: {r.message}" for r in failed)
        return _failure(plan, applied, f"one or more objects failed to apply: {detail}")
    return Continue(replace(applied, message=f"{step}: applied {len(results)} tasks"), 0.0)


def hook_phase(health: HealthResult | None) -> str:
    """A hook's phase from its health: Healthy is Succeeded, Degraded Failed, else Running."""
    status = health.status if health is not None else HealthStatus.HEALTHY
    return {HealthStatus.HEALTHY: "Succeeded", HealthStatus.DEGRADED: "Failed"}.get(
        status, "Running"
    )


def after_judge(
    state: OperationState,
    *,
    plan: SyncPlan,
    step: WaveStep,
    live: Mapping[ResourceKey, Obj],
    assess: Assess,
) -> Continue | Finish:
    """The step's gate over the objects read back (absent ones left out), the hooks' phases
    recorded; the step passes, waits or fails the operation."""
    gate = wave_gate(step, plan=plan, live=live, assess=assess)
    phases = {
        t.key: hook_phase(assess(live[t.key])) for t in step.applies if t.is_hook and t.key in live
    }
    judged = state.with_hook_phases(phases)
    if gate.verdict is GateVerdict.FAIL:
        return _failure(plan, judged, gate.message)
    if gate.verdict is GateVerdict.WAIT:
        message = plan.confirmation_message() or gate.message
        return Continue(replace(judged, message=message), WAIT_SECONDS)
    cursor = replace(judged.wave, passed=True) if judged.wave else None
    return Continue(replace(judged, wave=cursor, message=gate.message), 0.0)


def hooks_to_delete(state: OperationState) -> list[tuple[ResourceResult, DeletePolicy]]:
    """Hooks that ended as their delete policy names (HookSucceeded for a Succeeded hook,
    HookFailed for a Failed one): deleted when the operation ends if the live hook carries
    that policy, as gitops-engine does."""
    wanted = {"Succeeded": DeletePolicy.HOOK_SUCCEEDED, "Failed": DeletePolicy.HOOK_FAILED}
    return [
        (entry, wanted[entry.hook_phase])
        for entry in state.resources
        if entry.hook_type and entry.hook_phase in wanted
    ]


def terminated(state: OperationState) -> tuple[list[ResourceResult], OperationState]:
    """The running hooks (to delete), and the state with them marked Terminated."""
    running = [r for r in state.resources if r.hook_type and r.hook_phase == "Running"]
    marked = tuple(
        replace(r, hook_phase="Terminated") if r in running else r for r in state.resources
    )
    if state.sync_result is None:
        return running, state
    return running, replace(state, sync_result=replace(state.sync_result, resources=marked))


def finished(
    state: OperationState, *, phase: OperationPhase, message: str, at: str
) -> OperationState:
    """The operation's end: its phase and message, when, and no cursor."""
    return replace(state, phase=phase, message=message, finished_at=at, wave=None)
