"""Every `status.operationState` the Application controller persists, step by step through
a sync with hooks, waves and a failure, is read by the typed model and written back
unchanged: the store's shape did not move when the state became typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import (
    APPS_NS,
    Harness,
    app_with_presync_and_syncfail_hooks,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
)

from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION as APP_API
from headway.sync.operation_state import OperationState


def _states_until_finished(h: Harness, finish_jobs: dict[str, bool]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    for _ in range(40):
        h.step("shop")
        state = h.operation("shop")
        if state and state not in seen:
            seen.append(state)
        for job, ok in list(finish_jobs.items()):
            if h.exists("Job", job):
                h.finish_job(job, ok=ok)
                del finish_jobs[job]
        if state.get("phase") in ("Succeeded", "Failed", "Error"):
            return seen
    raise AssertionError(f"the operation did not finish: {h.operation('shop')}")


def test_each_persisted_state_of_a_successful_sync_round_trips(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {
        "app/all.yaml": manifests(
            hook_job("migrate", "PreSync", policy="HookSucceeded"),
            config_map("first", wave=0),
            config_map("second", wave=1),
            hook_job("smoke", "PostSync"),
        )
    }
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    states = _states_until_finished(h, {"migrate": True, "smoke": True})
    assert states[-1]["phase"] == "Succeeded"
    assert any("wave" in s for s in states)  # the cursor was persisted on the way
    for state in states:
        assert OperationState.from_dict(state).to_dict() == state


def test_each_persisted_state_of_a_failed_sync_round_trips(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = app_with_presync_and_syncfail_hooks(tmp_path, clock)
    states = _states_until_finished(h, {"migrate": False})
    assert states[-1]["phase"] == "Failed"
    assert states[-1].get("syncFailHooksRun") is True
    for state in states:
        assert OperationState.from_dict(state).to_dict() == state


def test_a_running_state_that_cannot_be_read_ends_in_error_naming_the_field(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    hand_written = {
        "operation": {"sync": {"revision": ""}, "initiatedBy": {"username": "someone"}},
        "phase": "Running",
        "startedAt": "2026-01-02T03:04:05Z",
        "wave": {"phase": "Later", "wave": 0, "applied": True},
    }
    status = {**h.status("shop"), "operationState": hand_written}
    h.store.patch_status(APP_API, "Application", "shop", APPS_NS, status)
    h.step("shop")
    state = h.operation("shop")
    assert state["phase"] == "Error"
    assert "status.operationState.wave.phase: 'Later' is not one of" in state["message"]
    assert "wave" not in state
    assert h.status("shop")["history"][-1]["phase"] == "Error"
    assert not h.exists("ConfigMap", "settings")  # nothing was applied


def test_a_failure_without_sync_fail_hooks_still_records_them_as_run(
    tmp_path: Path, clock: VirtualClock
) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    files = {"app/all.yaml": manifests(config_map("settings"), widget)}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    states = _states_until_finished(h, {})
    assert states[-1]["phase"] == "Failed"
    assert "dry run" in states[-1]["message"]
    assert states[-1].get("syncFailHooksRun") is True
    for state in states:
        assert OperationState.from_dict(state).to_dict() == state
