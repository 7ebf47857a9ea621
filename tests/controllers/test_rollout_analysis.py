"""Analysis steps through the controller: creation, success, abort, retry, Inconclusive,
fast-track rollback, and a controller killed between creating a run and writing status."""

from __future__ import annotations

from pathlib import Path

from rollout_harness import Harness, rollout, template

from headway.clock import VirtualClock

ANALYSIS = {
    "analysis": {
        "templates": [{"templateName": "errors"}],
        "args": [
            {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
            {"name": "service", "value": "web"},
        ],
    }
}
STEPS = [{"setWeight": 25}, ANALYSIS, {"setWeight": 50}]
ARGS = [{"name": "canary-hash"}, {"name": "service"}]


def _update(tmp_path: Path, clock: VirtualClock) -> tuple[Harness, str, str]:
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=ARGS))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    stable = h.status()["stableRS"]
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    return h, stable, h.status()["currentPodHash"]


def test_analysis_step_creates_one_run_and_waits(tmp_path: Path, clock: VirtualClock) -> None:
    h, _stable, new = _update(tmp_path, clock)
    runs = h.runs()
    assert [r["metadata"]["name"] for r in runs] == [f"web-{new}-2-1"]
    run = runs[0]
    assert run["metadata"]["labels"]["rollout-type"] == "Step"
    assert run["metadata"]["labels"]["step-index"] == "1"
    assert run["metadata"]["labels"]["rollouts-pod-template-hash"] == new
    assert run["metadata"]["ownerReferences"][0]["kind"] == "Rollout"
    assert {a["name"]: a.get("value") for a in run["spec"]["args"]} == {
        "canary-hash": new,
        "service": "web",
    }
    status = h.status()
    assert status["currentStepIndex"] == 1
    assert status["canary"]["currentStepAnalysisRunStatus"]["name"] == f"web-{new}-2-1"
    assert status["phase"] == "Progressing"


def test_successful_run_continues(tmp_path: Path, clock: VirtualClock) -> None:
    h, stable, new = _update(tmp_path, clock)
    h.set_run_phase(f"web-{new}-2-1", "Successful")
    h.settle()
    status = h.status()
    assert status["phase"] == "Healthy", status
    assert status["stableRS"] == new
    assert h.replica_sets() == {stable: 0, new: 4}


def test_failed_run_aborts_to_stable_and_names_run_and_metric(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, stable, new = _update(tmp_path, clock)
    run = f"web-{new}-2-1"
    h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed due to failed (1) > 0')
    h.settle()
    status = h.status()
    assert status["phase"] == "Degraded"
    assert status["abort"] is True and "abortedAt" in status
    assert status["message"].startswith("RolloutAborted: Rollout aborted update to revision 2")
    assert run in status["message"] and 'Metric "errors"' in status["message"]
    assert status["currentStepIndex"] == 0
    assert h.replica_sets() == {stable: 4, new: 0}
    # the message stays while the rollout stays aborted
    h.settle()
    assert h.status()["message"] == status["message"]


def test_retry_after_abort_starts_a_new_run(tmp_path: Path, clock: VirtualClock) -> None:
    h, _stable, new = _update(tmp_path, clock)
    h.set_run_phase(f"web-{new}-2-1", "Failed")
    h.settle()
    h.patch_status({"abort": False})  # `rollouts retry`
    h.settle()
    names = sorted(r["metadata"]["name"] for r in h.runs())
    assert names == [f"web-{new}-2-1", f"web-{new}-2-1.1"]
    assert h.status()["canary"]["currentStepAnalysisRunStatus"]["name"] == f"web-{new}-2-1.1"
    assert h.status()["phase"] == "Progressing"


def test_inconclusive_pauses_and_never_promotes(tmp_path: Path, clock: VirtualClock) -> None:
    h, stable, new = _update(tmp_path, clock)
    h.set_run_phase(f"web-{new}-2-1", "Inconclusive")
    h.settle()
    status = h.status()
    assert status["phase"] == "Paused" and status["message"] == "InconclusiveAnalysis"
    assert status["controllerPause"] is True
    assert status["stableRS"] == stable and status["currentStepIndex"] == 1
    clock.advance(3600)
    h.settle()
    assert h.status()["stableRS"] == stable
    # a user resumes: a fresh run is started for the same step
    h.patch_status({"pauseConditions": None})
    h.settle()
    names = sorted(r["metadata"]["name"] for r in h.runs())
    assert names == [f"web-{new}-2-1", f"web-{new}-2-1.1"]
    assert h.status()["currentStepIndex"] == 1


def test_reapplying_stable_template_fast_tracks(tmp_path: Path, clock: VirtualClock) -> None:
    h, stable, new = _update(tmp_path, clock)
    h.set_run_phase(f"web-{new}-2-1", "Failed")
    h.settle()
    h.apply(rollout(canary={"steps": STEPS}))  # v1 again
    h.settle()
    status = h.status()
    assert status["phase"] == "Healthy", status
    assert status["currentPodHash"] == stable == status["stableRS"]
    assert status["currentStepIndex"] == 3
    assert "abort" not in status or status["abort"] is False
    assert len(h.runs()) == 1  # no analysis for the rollback


def test_killed_after_creating_run_adopts_it(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=ARGS))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    run = h.runs()[0]["metadata"]["name"]
    # simulate a crash: the status write that named the run never happened
    h.patch_status({"canary": {}})
    h.restart()
    h.settle()
    assert [r["metadata"]["name"] for r in h.runs()] == [run]
    assert h.status()["canary"]["currentStepAnalysisRunStatus"]["name"] == run


def test_killed_at_every_step_never_repeats_a_run(tmp_path: Path, clock: VirtualClock) -> None:
    h, _stable, new = _update(tmp_path, clock)
    for _ in range(5):
        h.restart()
        h.step()
        h.kubelet()
    assert len(h.runs()) == 1
    h.set_run_phase(f"web-{new}-2-1", "Successful")
    for _ in range(10):
        h.restart()
        h.step()
        h.kubelet()
    assert h.status()["phase"] == "Healthy"
    assert len(h.runs()) == 1


def test_missing_argument_is_invalid_spec(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=[*ARGS, {"name": "threshold"}]))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    status = h.status()
    assert status["phase"] == "Degraded"
    assert "threshold" in status["message"] and status["message"].startswith("InvalidSpec")
    assert h.runs() == []


def test_background_analysis_from_starting_step(tmp_path: Path, clock: VirtualClock) -> None:
    steps = [{"setWeight": 25}, {"pause": {}}, {"setWeight": 50}, {"pause": {}}]
    background = {
        "templates": [{"templateName": "errors"}],
        "startingStep": 2,
        "args": [
            {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
            {"name": "service", "value": "web"},
        ],
    }
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=ARGS))
    h.apply(rollout(canary={"steps": steps, "analysis": background}))
    h.settle()
    assert h.runs() == []  # no background analysis on the initial deploy
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": steps, "analysis": background}))
    h.settle()
    assert h.runs() == []  # before startingStep
    h.patch_status({"pauseConditions": None})
    h.settle()
    new = h.status()["currentPodHash"]
    assert [r["metadata"]["name"] for r in h.runs()] == [f"web-{new}-2"]
    assert h.runs()[0]["metadata"]["labels"]["rollout-type"] == "Background"
    h.set_run_phase(f"web-{new}-2", "Failed", 'Metric "errors" assessed Failed')
    h.settle()
    assert h.status()["message"].startswith(
        "RolloutAborted: Rollout aborted update to revision 2: Background analysis run"
    )


def test_argo_cd_health_reads_the_status(tmp_path: Path, clock: VirtualClock) -> None:
    from headway.health.kinds.rollout import assess
    from headway.health.status import HealthStatus

    h, _stable, new = _update(tmp_path, clock)
    assert assess(h.get()).status == HealthStatus.PROGRESSING
    h.set_run_phase(f"web-{new}-2-1", "Inconclusive")
    h.settle()
    assert assess(h.get()).status == HealthStatus.SUSPENDED
    h.patch_status({"abort": True})
    h.settle()
    result = assess(h.get())
    assert result.status == HealthStatus.DEGRADED and "RolloutAborted" in result.message
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    assert assess(h.get()).status == HealthStatus.HEALTHY
