"""The sync operation's typed state and its pure `decide`: the persisted dict reads and writes
back unchanged, a bad field is named, and each situation decides the unit the executor used to
pick by hand (terminate, error, dry run, apply, judge, finish, SyncFail hooks once)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from headway.health import HealthResult, HealthStatus
from headway.sync.hooks import SyncPhase
from headway.sync.operation import (
    ApplyWave,
    Continue,
    DryRun,
    Finish,
    JudgeWave,
    OperationContext,
    Terminate,
    after_apply,
    after_dry_run,
    after_judge,
    decide,
    terminated,
)
from headway.sync.operation_state import (
    OperationPhase,
    OperationState,
    OperationStateError,
    ResourceResult,
    WaveCursor,
)
from headway.sync.plan import SyncPlan
from headway.sync.planner import plan_sync
from sync.objects import hook, obj

STARTED = "2026-01-02T03:04:05Z"


def _persisted(**fields: Any) -> dict[str, Any]:
    """A state as the executor persists it, part way through a run with hooks."""
    state: dict[str, Any] = {
        "operation": {"sync": {"prune": True, "revision": "abc"}, "initiatedBy": {"username": "u"}},
        "phase": "Running",
        "message": "PreSync wave 0: applied 1 tasks",
        "startedAt": STARTED,
        "operationId": "f00d",
        "retryCount": 0,
        "syncResult": {
            "revision": "abc",
            "revisions": ["abc"],
            "resources": [
                {
                    "group": "batch",
                    "version": "v1",
                    "kind": "Job",
                    "namespace": "shop",
                    "name": "migrate",
                    "status": "Synced",
                    "message": "job.batch/migrate created",
                    "syncPhase": "PreSync",
                    "hookType": "PreSync",
                    "hookPhase": "Running",
                }
            ],
        },
        "dryRunDone": True,
        "wave": {"phase": "PreSync", "wave": 0, "applied": True},
    }
    state.update(fields)
    return state


@pytest.mark.parametrize(
    "raw",
    [
        _persisted(),
        _persisted(wave={"phase": "Sync", "wave": 3, "applied": True, "passed": True}),
        _persisted(syncFailHooksRun=True, phase="Failed", finishedAt=STARTED),
        _persisted(phase="Running", retryAt=STARTED, retryCount=2, dryRunDone=None),
        # written by a Headway before operationId and retryCount existed
        {k: v for k, v in _persisted().items() if k not in ("operationId", "retryCount")},
        # a field some other writer added is kept, in the state and in a result entry
        _persisted(futureField={"x": 1}),
        _persisted(
            syncResult={
                "revision": "abc",
                "resources": [{**_persisted()["syncResult"]["resources"][0], "images": ["a"]}],
                "source": {"repoURL": "u"},
            }
        ),
    ],
    ids=["mid-run", "passed", "failed", "retrying", "older", "unknown-field", "unknown-result"],
)
def test_a_persisted_state_reads_and_writes_back_unchanged(raw: dict[str, Any]) -> None:
    raw = {k: v for k, v in raw.items() if v is not None}
    before = copy.deepcopy(raw)
    state = OperationState.from_dict(raw)
    assert state.to_dict() == raw
    assert raw == before  # reading does not touch the stored dict


def test_the_typed_state_names_what_the_dict_held() -> None:
    state = OperationState.from_dict(_persisted())
    assert state.phase is OperationPhase.RUNNING
    assert state.wave == WaveCursor(SyncPhase.PRE_SYNC, 0, applied=True)
    assert state.request.prune and state.request.revision == "abc"
    assert state.hook_mark == "f00d"
    (entry,) = state.resources
    assert (entry.kind, entry.name, entry.hook_phase, entry.api_version) == (
        "Job",
        "migrate",
        "Running",
        "batch/v1",
    )


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("phase", "Paused", "status.operationState.phase: 'Paused' is not one of"),
        ("wave", {"phase": "Later", "wave": 0}, "status.operationState.wave.phase"),
        ("wave", {"phase": "Sync", "wave": "two"}, "status.operationState.wave.wave"),
        ("retryCount", "many", "status.operationState.retryCount"),
        ("syncResult", ["not", "an", "object"], "status.operationState.syncResult"),
    ],
)
def test_a_field_that_cannot_be_read_is_named(field: str, value: object, named: str) -> None:
    with pytest.raises(OperationStateError, match=named):
        OperationState.from_dict(_persisted(**{field: value}))


def _plan(*objects: dict[str, Any]) -> SyncPlan:
    return plan_sync(list(objects), [], started_at=datetime(2026, 1, 2, tzinfo=UTC))


PLAN = _plan(
    hook("Job", "migrate", "PreSync"),
    obj("Namespace", "fresh", namespace=None),
    obj("ConfigMap", "inside", namespace="fresh"),
    obj("ConfigMap", "a", wave=0),
    obj("ConfigMap", "b", wave=1),
)


def _state(**fields: Any) -> OperationState:
    return OperationState.from_dict(_persisted(**fields))


def test_terminating_is_decided_before_anything_else() -> None:
    state = _state(phase="Terminating")
    assert decide(OperationContext(state, None, "broken")) == Terminate()
    running, after = terminated(state)
    assert [r.name for r in running] == ["migrate"]
    assert [r.hook_phase for r in after.resources] == ["Terminated"]


def test_a_plan_that_cannot_be_made_ends_in_error_without_sync_fail_hooks() -> None:
    action = decide(OperationContext(_state(), None, "bad option"))
    assert isinstance(action, Finish)
    assert action.phase is OperationPhase.ERROR
    assert action.message == "cannot plan the sync: bad option"
    assert action.sync_fail_hooks is None


def test_the_dry_run_leaves_out_objects_of_a_namespace_the_sync_creates() -> None:
    action = decide(OperationContext(_state(dryRunDone=None, wave=None), PLAN))
    assert isinstance(action, DryRun)
    names = sorted(t.key.name for t in action.tasks)
    assert names == ["a", "b", "fresh", "migrate"]


def test_dry_run_outcomes() -> None:
    state = _state(dryRunDone=None, wave=None)
    failed = after_dry_run(state, PLAN, ["ConfigMap/a: invalid"])
    assert isinstance(failed, Finish) and failed.phase is OperationPhase.FAILED
    assert "failed to apply (dry run): ConfigMap/a: invalid" in failed.message
    passed = after_dry_run(state, PLAN, [])
    assert isinstance(passed, Continue) and passed.state.dry_run_done
    only = replace_request(state, dryRun=True)
    finished = after_dry_run(only, PLAN, [])
    assert isinstance(finished, Finish) and finished.state.dry_run_done
    assert finished.message == "dry run succeeded; nothing applied"


def replace_request(state: OperationState, **sync: Any) -> OperationState:
    raw = state.to_dict()
    raw["operation"] = {**raw["operation"], "sync": {**raw["operation"]["sync"], **sync}}
    return OperationState.from_dict(raw)


def test_the_cursor_decides_apply_then_judge_then_the_next_wave() -> None:
    steps = PLAN.waves()
    first = decide(OperationContext(_state(wave=None), PLAN))
    assert first == ApplyWave(steps[0])
    applied = _state(wave={"phase": "PreSync", "wave": 0, "applied": True})
    assert decide(OperationContext(applied, PLAN)) == JudgeWave(steps[0])
    passed = _state(wave={"phase": "PreSync", "wave": 0, "applied": True, "passed": True})
    assert decide(OperationContext(passed, PLAN)) == ApplyWave(steps[1])


def test_a_controller_restarted_after_an_apply_judges_instead_of_applying_again() -> None:
    state = _state(wave=None)
    step = PLAN.waves()[0]
    result = ResourceResult.from_dict(_persisted()["syncResult"]["resources"][0])
    outcome = after_apply(state, PLAN, step, [result])
    assert isinstance(outcome, Continue)
    stored = outcome.state.to_dict()  # what the killed controller left in the store
    resumed = OperationState.from_dict(stored)
    assert decide(OperationContext(resumed, PLAN)) == JudgeWave(step)


def test_the_last_wave_without_hooks_ends_the_operation_once_applied() -> None:
    last = PLAN.waves()[-1]
    state = _state(wave={"phase": str(last.phase), "wave": last.wave, "applied": True})
    action = decide(OperationContext(state, PLAN))
    assert isinstance(action, Finish) and action.phase is OperationPhase.SUCCEEDED


def test_sync_fail_hooks_run_only_once_per_operation() -> None:
    plan = _plan(hook("Job", "notify", "SyncFail"), obj("ConfigMap", "a"))
    bad = ResourceResult("", "v1", "ConfigMap", "shop", "a", "SyncFailed", "denied", "Sync")
    step = plan.waves()[0]
    first = after_apply(_state(wave=None), plan, step, [bad])
    assert isinstance(first, Finish) and len(first.sync_fail_hooks) == 1
    again = after_apply(_state(wave=None, syncFailHooksRun=True), plan, step, [bad])
    assert isinstance(again, Finish) and again.sync_fail_hooks is None
    # a plan without SyncFail hooks still marks them run, as the stored state always said
    plain = _plan(obj("ConfigMap", "a"))
    none = after_apply(_state(wave=None), plain, plain.waves()[0], [bad])
    assert isinstance(none, Finish) and none.sync_fail_hooks == ()


def test_judging_records_hook_phases_and_marks_the_wave_passed() -> None:
    step = PLAN.waves()[0]
    state = _state()
    job = {"kind": "Job", "metadata": {"name": "migrate", "namespace": "shop"}}

    def assess(_: Any) -> HealthResult:
        return HealthResult(HealthStatus.HEALTHY, "")

    outcome = after_judge(state, plan=PLAN, step=step, live={step.tasks[0].key: job}, assess=assess)
    assert isinstance(outcome, Continue)
    assert outcome.state.wave is not None and outcome.state.wave.passed
    assert [r.hook_phase for r in outcome.state.resources] == ["Succeeded"]


def test_pinning_names_the_revisions_in_the_request_and_the_result() -> None:
    state = _state(
        operation={"sync": {"prune": True}}, syncResult={"revision": "", "resources": []}
    )
    assert state.pinned_revisions == [""]
    pinned = state.pinned_to(["c1", "c2"])
    assert pinned.pinned_revisions == ["c1", "c2"]
    raw = pinned.to_dict()
    assert raw["operation"]["sync"] == {"prune": True, "revision": "c1", "revisions": ["c1", "c2"]}
    assert raw["syncResult"]["revision"] == "c1"
    assert state.pinned_to([]) == state
