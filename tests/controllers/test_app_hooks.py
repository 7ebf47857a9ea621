"""Hooks: PreSync/PostSync Jobs, each delete policy, generateName, SyncFail, resume."""

from __future__ import annotations

from pathlib import Path

from app_harness import (
    app_with_presync_and_syncfail_hooks,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
    message,
    phase,
)

from headway.clock import VirtualClock


def _waiting_on(job: str):  # type: ignore[no-untyped-def]
    return lambda s: f"Job/{job}" in message(s) and "waiting" in message(s)


def test_presync_hook_runs_first_and_hook_succeeded_deletes_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {
        "app/all.yaml": manifests(
            hook_job("migrate", "PreSync", policy="HookSucceeded"), config_map("settings")
        )
    }
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _waiting_on("migrate"))
    assert message(status).startswith("PreSync wave 0 waiting: Job/migrate")
    assert h.exists("Job", "migrate")
    assert not h.exists("ConfigMap", "settings")  # nothing applied before the hook is done
    h.finish_job("migrate")
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    assert h.exists("ConfigMap", "settings")
    assert not h.exists("Job", "migrate")  # HookSucceeded
    hooks = [r for r in status["operationState"]["syncResult"]["resources"] if r.get("hookType")]
    assert [(r["name"], r["hookPhase"]) for r in hooks] == [("migrate", "Succeeded")]


def test_failing_presync_hook_stops_the_sync_before_anything_is_applied(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = app_with_presync_and_syncfail_hooks(tmp_path, clock)
    h.run("shop", _waiting_on("migrate"))
    h.finish_job("migrate", ok=False)
    status = h.run("shop", lambda s: phase(s) == "Failed")
    assert "PreSync wave 0 failed: Job/migrate Degraded" in message(status)
    assert not h.exists("ConfigMap", "settings")
    assert not h.exists("Job", "migrate")  # HookFailed
    assert h.exists("Job", "notify")  # the SyncFail hook ran
    assert status["history"][-1]["phase"] == "Failed"


def test_before_hook_creation_replaces_the_previous_run_and_default_keeps_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(hook_job("smoke", "PostSync"), config_map("settings"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", _waiting_on("smoke"))
    h.finish_job("smoke")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    first_uid = h.get("Job", "smoke")["metadata"]["uid"]  # BeforeHookCreation keeps it
    h.remote.commit({"app/all.yaml": manifests(hook_job("smoke", "PostSync"), config_map("v2"))})
    h.reader.mark_changed(h.remote.url)
    h.run("shop", _waiting_on("smoke"))
    assert h.get("Job", "smoke")["metadata"]["uid"] != first_uid


def test_generate_name_hook_gets_a_name_stable_within_the_operation(
    tmp_path: Path, clock: VirtualClock
) -> None:
    job = hook_job("x", "PreSync")
    job["metadata"] = {"generateName": "migrate-", "annotations": job["metadata"]["annotations"]}
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(job, config_map("settings"))})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", lambda s: "waiting: Job/migrate-" in message(s))
    jobs = h.store.list("batch/v1", "Job", namespace="demo")
    assert [j["metadata"]["name"].startswith("migrate-") for j in jobs] == [True]
    for _ in range(3):  # re-judging the step never creates a second one
        h.step("shop")
    assert len(h.store.list("batch/v1", "Job", namespace="demo")) == 1
    h.finish_job(jobs[0]["metadata"]["name"])
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    assert status["sync"]["status"] == "Synced"


def test_restarted_controller_resumes_at_the_same_wave_without_rerunning_a_hook(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(hook_job("migrate", "PreSync"), config_map("settings"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", _waiting_on("migrate"))
    uid = h.get("Job", "migrate")["metadata"]["uid"]
    h.restart_controller()  # the old controller object is dropped with its caches
    h.step("shop")
    assert h.get("Job", "migrate")["metadata"]["uid"] == uid
    assert "PreSync wave 0 waiting: Job/migrate" in message(h.status("shop"))
    h.finish_job("migrate")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert h.get("Job", "migrate")["metadata"]["uid"] == uid
    assert h.exists("ConfigMap", "settings")
