"""The sync operation as a step function: each call does one unit of work and returns.

What the unit is, and what its outcome means, is decided by the pure core
(`headway.sync.operation.decide` and its transitions, over the typed `OperationState`); this
module does the I/O in between: the dry runs, applies, prunes, hook creation and deletion, and
reading back the objects a wave is judged on.

Progress is persisted in `status.operationState` after every call, in Argo CD's fields plus
`wave` (Headway's cursor: the step's phase and wave, whether it was applied, whether it
passed), so a controller that dies anywhere resumes at the same wave. Hooks carry the
operation's id, so a resumed step never re-creates a hook that already ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.app.sync_tasks_io import TaskResult, TaskRunner, api_version_of
from headway.health import HealthResult
from headway.kubetime import format_time
from headway.model.obj import Obj
from headway.sync import hooks
from headway.sync.operation import (
    Action,
    ApplyWave,
    Continue,
    DryRun,
    Finish,
    OperationContext,
    Terminate,
    after_apply,
    after_dry_run,
    after_judge,
    decide,
    finished,
    hooks_to_delete,
    terminated,
    waiting_for_hook,
)
from headway.sync.operation_plan import PlanInputs, plan_operation
from headway.sync.operation_state import OperationPhase, OperationState, ResourceResult
from headway.sync.options import SyncOptions
from headway.sync.plan import SyncPlan, WaveStep
from headway.sync.resources import ResourceKey
from headway.sync.tasks import SyncTask

__all__ = ["ExecutorInput", "StepOutcome", "step_operation"]

Assess = Callable[[Obj], HealthResult | None]
Refuse = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True)
class ExecutorInput:
    """Everything one step needs. `state` is the persisted `status.operationState`."""

    cluster: Cluster
    app: str
    namespace: str
    state: Mapping[str, Any]
    desired: Sequence[Obj]
    live: Mapping[ResourceKey, Obj]
    plan_options: SyncOptions
    now: datetime
    assess: Assess
    modified: Mapping[ResourceKey, bool] | None = None
    prune_confirmed: bool = False
    rules: Sequence[Any] = ()
    refuse: Refuse | None = None
    existing_namespaces: frozenset[str] = field(default_factory=frozenset)
    namespace_metadata: Mapping[str, Any] | None = None  # syncPolicy.managedNamespaceMetadata
    # (group, kind) of cluster-scoped kinds beyond the built-in table (discovery, CRDs)
    cluster_scoped: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class StepOutcome:
    state: dict[str, Any]
    requeue_after: float | None  # None: the operation is over

    @property
    def finished(self) -> bool:
        return self.state.get("phase") in ("Succeeded", "Failed", "Error")


def _plan(inp: ExecutorInput, state: OperationState) -> SyncPlan:
    inputs = PlanInputs(
        desired=inp.desired,
        live=inp.live,
        options=inp.plan_options,
        namespace=inp.namespace,
        modified=inp.modified,
        prune_confirmed=inp.prune_confirmed,
        existing_namespaces=inp.existing_namespaces,
        namespace_metadata=inp.namespace_metadata,
        cluster_scoped=inp.cluster_scoped,
    )
    return plan_operation(state, inputs)


def step_operation(inp: ExecutorInput) -> StepOutcome:
    """Advance the running operation in `inp.state` by one unit."""
    state = OperationState.from_dict(inp.state)
    runner = TaskRunner(
        inp.cluster,
        app=inp.app,
        operation_id=state.hook_mark,
        rules=inp.rules,
        refuse=inp.refuse,
    )
    plan, plan_error = None, ""
    if state.phase is not OperationPhase.TERMINATING:
        try:
            plan = _plan(inp, state)
        except ValueError as err:
            plan_error = str(err)
    action = decide(OperationContext(state, plan, plan_error, inp.live))
    return _conclude(inp, runner, _act(inp, runner, state, plan, action))


def _act(
    inp: ExecutorInput,
    runner: TaskRunner,
    state: OperationState,
    plan: SyncPlan | None,
    action: Action,
) -> Continue | Finish | StepOutcome:
    if isinstance(action, Terminate):
        return _terminate(inp, state, runner)
    if isinstance(action, Finish):
        return action
    assert plan is not None  # every other action comes from a plan
    if isinstance(action, DryRun):
        errors = [e for task in action.tasks if (e := runner.dry_run(task)) is not None]
        return after_dry_run(state, plan, errors)
    if isinstance(action, ApplyWave):
        return _apply_step(state, runner, plan, action.step)
    judged = state.recorded(_result(runner.prune(task)) for task in action.late_prunes)
    live = {t.key: _read(inp.cluster, t) for t in action.step.tasks}
    present = {k: v for k, v in live.items() if v is not None}
    return after_judge(judged, plan=plan, step=action.step, live=present, assess=inp.assess)


def _conclude(
    inp: ExecutorInput, runner: TaskRunner, done: Continue | Finish | StepOutcome
) -> StepOutcome:
    if isinstance(done, StepOutcome):
        return done
    if isinstance(done, Continue):
        return StepOutcome(done.state.to_dict(), done.requeue_after)
    state = done.state
    if done.sync_fail_hooks is not None:
        created = [
            r for s in done.sync_fail_hooks for t in s.applies if (r := runner.create_hook(t))
        ]
        state = replace(state.recorded(_result(r) for r in created), sync_fail_hooks_run=True)
    _delete_finished_hooks(inp, state, runner)
    end = finished(state, phase=done.phase, message=done.message, at=format_time(inp.now))
    return StepOutcome(end.to_dict(), None)


def _result(result: TaskResult) -> ResourceResult:
    return ResourceResult.from_dict(result.to_status())


def _apply_step(
    state: OperationState, runner: TaskRunner, plan: SyncPlan, step: WaveStep
) -> Continue | Finish:
    results: list[TaskResult] = []
    for task in step.prunes:
        results.append(runner.prune(task))
    for task in step.applies:
        if task.is_hook:
            result = runner.create_hook(task)
            if result is None:
                return waiting_for_hook(state, step, task)
            results.append(result)
        elif task.runs:
            results.append(runner.apply(task))
    return after_apply(state, plan, step, [_result(r) for r in results])


def _read(cluster: Cluster, task: SyncTask) -> dict[str, Any] | None:
    key = task.key
    try:
        return cluster.get(api_version_of(task), key.kind, key.name, key.namespace or None)
    except NotFound:
        return None
    except ClusterError:
        return None


def _delete_finished_hooks(inp: ExecutorInput, state: OperationState, runner: TaskRunner) -> None:
    """Deletes the hooks `hooks_to_delete` names whose live object carries that policy."""
    for entry, policy in hooks_to_delete(state):
        try:
            live = inp.cluster.get(
                entry.api_version, entry.kind, entry.name, entry.namespace or None
            )
        except ClusterError:
            continue
        if policy in hooks.delete_policies(live):
            runner.delete_live(entry.key, entry.api_version)


def _terminate(inp: ExecutorInput, state: OperationState, runner: TaskRunner) -> StepOutcome:
    """`headway app terminate`: running hooks are deleted, the operation fails."""
    running, state = terminated(state)
    for entry in running:
        runner.delete_live(entry.key, entry.api_version)
    _delete_finished_hooks(inp, state, runner)
    end = finished(
        state, phase=OperationPhase.FAILED, message="Operation terminated", at=format_time(inp.now)
    )
    return StepOutcome(end.to_dict(), None)


