"""`wave_gate`: may the next wave start, and if not, exactly why.

Argo CD's rules for a multi-step sync (gitops-engine's `Sync`): a wave is done when every
task in it is done - an applied resource when its live object is Healthy or has no health
check, a hook when it succeeded, a prune when the object is gone. A Degraded resource or
failed hook fails the operation; anything else (Progressing, Suspended, Missing, Unknown)
waits. The last step is different (`ends_at_apply`): once it is applied the operation is
over, and the health of what it applied is left to the app's health - a canary paused by its
steps is Suspended for as long as a person or an analysis takes, and must not hold the next
commit back.

Headway adds the explanation: when a blocked resource depends on a workload the plan only
applies in a later wave (an HPA's scale target, a PDB's pods), the message names that
workload and its wave - the first-install deadlock - and the decision is marked deadlocked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from headway.health import HealthResult, HealthStatus
from headway.health import assess as builtin_assess
from headway.model.obj import Obj
from headway.sync.dependencies import depends_on
from headway.sync.hooks import SyncPhase
from headway.sync.options import ConfirmableSwitch
from headway.sync.plan import SyncPlan, WaveStep
from headway.sync.resources import ResourceKey
from headway.sync.tasks import Disposition, SyncTask

__all__ = ["Blocker", "GateDecision", "GateVerdict", "ends_at_apply", "wave_gate"]

Assess = Callable[[Obj], HealthResult | None]


class GateVerdict(StrEnum):
    PROCEED = "proceed"
    WAIT = "waiting"
    FAIL = "failed"


@dataclass(frozen=True)
class Blocker:
    key: ResourceKey
    state: str
    reason: str
    fails: bool = False
    needs: ResourceKey | None = None
    needs_wave: int | None = None

    def __str__(self) -> str:
        detail = self.reason
        if self.needs is not None:
            detail += f"; it is applied in wave {self.needs_wave}"
        return f"{self.key} {self.state} ({detail})" if detail else f"{self.key} {self.state}"


@dataclass(frozen=True)
class GateDecision:
    verdict: GateVerdict
    step: WaveStep
    blockers: tuple[Blocker, ...] = ()

    @property
    def may_proceed(self) -> bool:
        return self.verdict is GateVerdict.PROCEED

    @property
    def deadlocked(self) -> bool:
        return any(b.needs is not None for b in self.blockers)

    @property
    def message(self) -> str:
        phase = "" if self.step.phase is SyncPhase.SYNC else f"{self.step.phase} "
        head = f"{phase}wave {self.step.wave}"
        if self.verdict is GateVerdict.PROCEED:
            return f"{head} done"
        shown = [b for b in self.blockers if b.fails] or list(self.blockers)
        return f"{head} {self.verdict}: " + ", ".join(str(b) for b in shown)


def ends_at_apply(step: WaveStep, *, plan: SyncPlan) -> bool:
    """Whether the operation succeeds as soon as `step` is applied, without judging it:
    Argo CD's rule for the last step of a sync, unless that step runs hooks (whose result
    is the point of running them) or holds a `Prune=confirm` prune (which runs only once
    confirmed, after the step was applied)."""
    steps = plan.waves()
    if not steps or step != steps[-1]:
        return False
    return not any(
        t.is_hook or (t.is_prune and t.options.prune is ConfirmableSwitch.CONFIRM)
        for t in step.tasks
    )


def wave_gate(
    step: WaveStep,
    *,
    plan: SyncPlan,
    live: Mapping[ResourceKey, Obj],
    assess: Assess = builtin_assess,
) -> GateDecision:
    """Judge one step after its tasks were run, from the live objects now in the cluster."""
    blockers = [
        b for t in step.tasks if (b := _blocker(t, step, plan=plan, live=live, assess=assess))
    ]
    if any(b.fails for b in blockers):
        return GateDecision(GateVerdict.FAIL, step, tuple(blockers))
    if blockers:
        return GateDecision(GateVerdict.WAIT, step, tuple(blockers))
    return GateDecision(GateVerdict.PROCEED, step)


def _blocker(
    task: SyncTask,
    step: WaveStep,
    *,
    plan: SyncPlan,
    live: Mapping[ResourceKey, Obj],
    assess: Assess,
) -> Blocker | None:
    if task.disposition is Disposition.AWAITING_CONFIRMATION:
        return Blocker(task.key, "prune", "waiting for pruning confirmation")
    if not task.runs:
        return None
    obj = live.get(task.key)
    if task.is_prune:
        return None if obj is None else Blocker(task.key, "Pending deletion", "")
    if obj is None:
        return Blocker(task.key, "Missing", "not created yet")
    health = assess(obj)
    if health is None or health.status is HealthStatus.HEALTHY:
        return None
    later = _later_missing_dependency(obj, step, plan=plan, live=live)
    if later is not None:
        needed, wave = later
        reason = f"{_condition_reason(obj, health)}: {_resource(needed)} not found"
        return Blocker(task.key, health.status, reason, needs=needed, needs_wave=wave)
    fails = health.status is HealthStatus.DEGRADED
    return Blocker(task.key, health.status, _explained(task, health), fails=fails)


def _explained(task: SyncTask, health: HealthResult) -> str:
    """The health message, plus what ends the wait for a paused Rollout: in an earlier wave it
    holds the later ones (as in Argo CD) until a person or its pause step lets it go on."""
    if task.key.kind == "Rollout" and health.status is HealthStatus.SUSPENDED:
        detail = health.message or "paused"
        return f"{detail}; the next waves start once it is promoted or its pause ends"
    return health.message


def _later_missing_dependency(
    obj: Obj, step: WaveStep, *, plan: SyncPlan, live: Mapping[ResourceKey, Obj]
) -> tuple[ResourceKey, int] | None:
    steps = plan.waves()
    here = steps.index(step) if step in steps else -1
    targets = [t.target for t in plan.tasks if t.target is not None]
    for needed in depends_on(obj, targets):
        if needed in live:
            continue
        later = plan.step_of(needed)
        if later is not None and steps.index(later) > here:
            return needed, later.wave
    return None


def _condition_reason(obj: Obj, health: HealthResult) -> str:
    """The reason of the first failing condition (e.g. FailedGetScale), else the message."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        failing = isinstance(condition, Mapping) and condition.get("status") == "False"
        if failing and condition.get("reason"):
            return str(condition["reason"])
    return health.message or str(health.status)


def _resource(key: ResourceKey) -> str:
    return f"{key.kind.lower()}s/{key.name}"
