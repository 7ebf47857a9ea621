"""The sync operation as a step function: each call does one unit of work and returns.

Units, in order: a dry run of every object (nothing is applied if any fails); then, per
(phase, wave) step of the plan, apply it (prunes, hook re-creation, applies, hook creation)
and judge it with `wave_gate`; the next step starts on a later call, only once the gate lets
it. The last step is not judged (`ends_at_apply`, Argo CD's rule): the operation succeeds
once it is applied, unless it holds hooks. A failure runs the SyncFail hooks and ends the
operation; success deletes the hooks whose delete policy says so.

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
from headway.controllers.sync_tasks_io import TaskResult, TaskRunner, api_version_of
from headway.health import HealthResult, HealthStatus
from headway.sync import hooks
from headway.sync.gate import GateVerdict, ends_at_apply, wave_gate
from headway.sync.hooks import DeletePolicy, SyncPhase
from headway.sync.options import SyncOptions
from headway.sync.plan import SyncPlan, WaveStep
from headway.sync.planner import plan_sync
from headway.sync.resources import ResourceKey, key_of
from headway.sync.tasks import SyncTask

__all__ = ["ExecutorInput", "StepOutcome", "step_operation"]

Obj = Mapping[str, Any]
Assess = Callable[[Obj], HealthResult | None]
Refuse = Callable[[Mapping[str, Any]], str | None]

# How soon to look again at a wave that waits on health (watch events wake sooner).
WAIT_SECONDS = 2.0


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


def _position(phase: str, wave: int) -> tuple[int, int]:
    return SyncPhase(phase).order, wave


def _step_position(step: WaveStep) -> tuple[int, int]:
    return step.phase.order, step.wave


def _sync_request(state: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((state.get("operation") or {}).get("sync")) or {}


def _selected(request: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (str(r.get("group") or ""), str(r.get("kind") or ""), str(r.get("name") or ""))
        for r in request.get("resources") or []
    }


def _is_selected(obj: Obj, selected: set[tuple[str, str, str]]) -> bool:
    key = key_of(obj)
    return (key.group, key.kind, key.name) in selected


def _plan(inp: ExecutorInput) -> SyncPlan:
    request = _sync_request(inp.state)
    selected = _selected(request)
    desired, live = list(inp.desired), list(inp.live.values())
    if selected:
        desired = [o for o in desired if _is_selected(o, selected)]
        live = [o for o in live if _is_selected(o, selected)]
    plan = plan_sync(
        desired,
        live,
        options=inp.plan_options,
        # Desired objects carry their namespaces already (prepare_desired); the namespace is
        # for CreateNamespace, and `cluster_scoped` keeps it off cluster-scoped custom kinds.
        namespace=inp.namespace if inp.plan_options.create_namespace else "",
        cluster_scoped=inp.cluster_scoped,
        prune=bool(request.get("prune")),
        prune_confirmed=inp.prune_confirmed,
        modified=inp.modified,
        revision=str(request.get("revision") or ""),
        started_at=datetime.fromisoformat(str(inp.state["startedAt"])),
        skip_hooks=bool(selected),
        existing_namespaces=inp.existing_namespaces,
    )
    return _with_namespace_metadata(plan, inp)


def _with_namespace_metadata(plan: SyncPlan, inp: ExecutorInput) -> SyncPlan:
    """CreateNamespace with `managedNamespaceMetadata`: the created namespace carries its
    labels and annotations."""
    extra = inp.namespace_metadata or {}
    if not extra or not inp.namespace:
        return plan
    tasks = []
    for task in plan.tasks:
        created = task.key.kind == "Namespace" and task.key.name == inp.namespace
        if created and task.phase is SyncPhase.PRE_SYNC and task.target is not None:
            meta = dict(task.target.get("metadata") or {})
            for part in ("labels", "annotations"):
                if extra.get(part):
                    meta[part] = {**(meta.get(part) or {}), **extra[part]}
            tasks.append(replace(task, target={**task.target, "metadata": meta}))
        else:
            tasks.append(task)
    return replace(plan, tasks=tuple(tasks))


def step_operation(inp: ExecutorInput) -> StepOutcome:
    """Advance the running operation in `inp.state` by one unit."""
    state = dict(inp.state)
    runner = TaskRunner(
        inp.cluster,
        app=inp.app,
        operation_id=str(state.get("operationId") or state["startedAt"]),
        rules=inp.rules,
        refuse=inp.refuse,
    )
    if state.get("phase") == "Terminating":
        return _terminate(inp, state, runner)
    try:
        plan = _plan(inp)
    except ValueError as err:
        outcome = _finish(inp, state, runner, failed=f"cannot plan the sync: {err}")
        outcome.state["phase"] = "Error"  # Argo CD's phase for an operation that could not run
        return outcome
    if plan.problems:
        return _finish(inp, state, runner, failed="; ".join(plan.problems), plan=plan)
    if not state.get("dryRunDone"):
        return _dry_run(inp, state, runner, plan)
    return _advance(inp, state, runner, plan)


def _dry_run(
    inp: ExecutorInput, state: dict[str, Any], runner: TaskRunner, plan: SyncPlan
) -> StepOutcome:
    created = _namespaces_created_by(plan)
    errors = []
    for task in plan.tasks:
        namespace_pending = task.key.namespace in created
        if task.is_prune or task.target is None or namespace_pending:
            continue
        error = runner.dry_run(task)
        if error is not None:
            errors.append(error)
    if errors:
        message = "one or more objects failed to apply (dry run): " + "; ".join(errors)
        return _finish(inp, state, runner, failed=message, plan=plan)
    state["dryRunDone"] = True
    if _sync_request(state).get("dryRun"):
        return _finish(inp, state, runner, plan=plan, message="dry run succeeded; nothing applied")
    state["message"] = f"dry run of {len(plan.tasks)} tasks passed"
    return StepOutcome(state, 0.0)


def _namespaces_created_by(plan: SyncPlan) -> set[str]:
    return {t.key.name for t in plan.tasks if t.key.kind == "Namespace" and not t.is_prune}


def _advance(
    inp: ExecutorInput, state: dict[str, Any], runner: TaskRunner, plan: SyncPlan
) -> StepOutcome:
    cursor = state.get("wave") or {}
    here = _position(cursor["phase"], int(cursor["wave"])) if cursor else (-99, -(10**9))
    for step in plan.waves():
        position = _step_position(step)
        if position < here or (position == here and cursor.get("passed")):
            continue
        if position == here and cursor.get("applied"):
            if ends_at_apply(step, plan=plan):
                break
            return _judge(inp, state, runner, plan, step)
        return _apply_step(inp, state, runner, plan, step)
    return _finish(inp, state, runner, plan=plan, message="successfully synced (all tasks run)")


def _apply_step(
    inp: ExecutorInput,
    state: dict[str, Any],
    runner: TaskRunner,
    plan: SyncPlan,
    step: WaveStep,
) -> StepOutcome:
    results: list[TaskResult] = []
    for task in step.prunes:
        results.append(runner.prune(task))
    for task in step.applies:
        if task.is_hook:
            result = runner.create_hook(task)
            if result is None:
                state["message"] = f"{step}: waiting for the previous {task.key} to be deleted"
                return StepOutcome(state, WAIT_SECONDS)
            results.append(result)
        elif task.runs:
            results.append(runner.apply(task))
    _record(state, results)
    state["wave"] = {"phase": str(step.phase), "wave": step.wave, "applied": True}
    failed = [r for r in results if r.failed]
    if failed:
        detail = "; ".join(f"{r.key}: {r.message}" for r in failed)
        message = f"one or more objects failed to apply: {detail}"
        return _finish(inp, state, runner, failed=message, plan=plan)
    state["message"] = f"{step}: applied {len(results)} tasks"
    return StepOutcome(state, 0.0)


def _judge(
    inp: ExecutorInput,
    state: dict[str, Any],
    runner: TaskRunner,
    plan: SyncPlan,
    step: WaveStep,
) -> StepOutcome:
    for task in step.prunes:  # a prune confirmed (or retried) since the step was applied
        if task.runs and task.key in inp.live and not _deleting(inp.live[task.key]):
            _record(state, [runner.prune(task)])
    live = {t.key: _read(inp.cluster, t) for t in step.tasks}
    present = {k: v for k, v in live.items() if v is not None}
    gate = wave_gate(step, plan=plan, live=present, assess=inp.assess)
    _record_hook_phases(state, step, present, inp.assess)
    if gate.verdict is GateVerdict.FAIL:
        return _finish(inp, state, runner, failed=gate.message, plan=plan)
    if gate.verdict is GateVerdict.WAIT:
        state["message"] = plan.confirmation_message() or gate.message
        return StepOutcome(state, WAIT_SECONDS)
    state["wave"] = {**state["wave"], "passed": True}
    state["message"] = gate.message
    return StepOutcome(state, 0.0)


def _deleting(obj: Obj) -> bool:
    return (obj.get("metadata") or {}).get("deletionTimestamp") is not None


def _read(cluster: Cluster, task: SyncTask) -> dict[str, Any] | None:
    key = task.key
    try:
        return cluster.get(api_version_of(task), key.kind, key.name, key.namespace or None)
    except NotFound:
        return None
    except ClusterError:
        return None


def _result_key(entry: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    return (
        str(entry.get("group", "")),
        str(entry.get("kind", "")),
        str(entry.get("namespace", "")),
        str(entry.get("name", "")),
        str(entry.get("syncPhase", "")),
    )


def _record(state: dict[str, Any], results: Sequence[TaskResult]) -> None:
    """Merge task results into `syncResult.resources` (one entry per object and phase)."""
    sync_result = dict(state.get("syncResult") or {})
    entries = {_result_key(e): e for e in sync_result.get("resources") or []}
    for result in results:
        entry = result.to_status()
        old = entries.get(_result_key(entry))
        if old is not None and old.get("hookPhase") and result.hook_type:
            entry["hookPhase"] = old["hookPhase"]
        entries[_result_key(entry)] = entry
    sync_result["resources"] = list(entries.values())
    state["syncResult"] = sync_result


def _record_hook_phases(
    state: dict[str, Any], step: WaveStep, live: Mapping[ResourceKey, Obj], assess: Assess
) -> None:
    phases = {}
    for task in step.applies:
        if not task.is_hook or task.key not in live:
            continue
        health = assess(live[task.key])
        status = health.status if health is not None else HealthStatus.HEALTHY
        phases[task.key] = {
            HealthStatus.HEALTHY: "Succeeded",
            HealthStatus.DEGRADED: "Failed",
        }.get(status, "Running")
    for entry in (state.get("syncResult") or {}).get("resources") or []:
        key = ResourceKey(entry["group"], entry["kind"], entry["namespace"], entry["name"])
        if entry.get("hookType") and key in phases:
            entry["hookPhase"] = phases[key]


def _finish(
    inp: ExecutorInput,
    state: dict[str, Any],
    runner: TaskRunner,
    *,
    failed: str | None = None,
    message: str = "",
    plan: SyncPlan | None = None,
) -> StepOutcome:
    if failed is not None and plan is not None and not state.get("syncFailHooksRun"):
        results = [
            r for s in plan.failure_waves() for t in s.applies if (r := runner.create_hook(t))
        ]
        _record(state, results)
        state["syncFailHooksRun"] = True
    _delete_finished_hooks(inp, state, runner)
    state["phase"] = "Failed" if failed is not None else "Succeeded"
    state["message"] = failed if failed is not None else message
    state["finishedAt"] = _stamp(inp.now)
    state.pop("wave", None)
    return StepOutcome(state, None)


def _delete_finished_hooks(inp: ExecutorInput, state: dict[str, Any], runner: TaskRunner) -> None:
    """HookSucceeded hooks that succeeded and HookFailed hooks that failed are deleted when
    the operation ends (gitops-engine does the same); the policy is read from the hook."""
    for entry in (state.get("syncResult") or {}).get("resources") or []:
        wanted = {
            "Succeeded": DeletePolicy.HOOK_SUCCEEDED,
            "Failed": DeletePolicy.HOOK_FAILED,
        }.get(str(entry.get("hookPhase")))
        if not entry.get("hookType") or wanted is None:
            continue
        key = ResourceKey(entry["group"], entry["kind"], entry["namespace"], entry["name"])
        api = f"{entry['group']}/{entry['version']}" if entry["group"] else entry["version"]
        try:
            live = inp.cluster.get(api, key.kind, key.name, key.namespace or None)
        except ClusterError:
            continue
        if wanted in hooks.delete_policies(live):
            runner.delete_live(key, api)


def _terminate(inp: ExecutorInput, state: dict[str, Any], runner: TaskRunner) -> StepOutcome:
    """`headway app terminate`: running hooks are deleted, the operation fails."""
    for entry in (state.get("syncResult") or {}).get("resources") or []:
        if entry.get("hookType") and entry.get("hookPhase") == "Running":
            key = ResourceKey(entry["group"], entry["kind"], entry["namespace"], entry["name"])
            api = f"{entry['group']}/{entry['version']}" if entry["group"] else entry["version"]
            runner.delete_live(key, api)
            entry["hookPhase"] = "Terminated"
    _delete_finished_hooks(inp, state, runner)
    state["phase"] = "Failed"
    state["message"] = "Operation terminated"
    state["finishedAt"] = _stamp(inp.now)
    state.pop("wave", None)
    return StepOutcome(state, None)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
