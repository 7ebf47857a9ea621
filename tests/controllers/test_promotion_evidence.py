"""Promotion never skips failed evidence (issue 16, item 2).

The window: an AnalysisRun has turned Failed (or Error) and the Rollout controller has not yet
written the abort. A `rollouts promote` in that window used to skip the failed step, and a
controller that decided on the run as it was a moment before used to promote the revision.
Both situations are built deterministically: the run's phase is written without letting the
controller step (the CLI case), or written by the controller's `after_decide` test hook,
between its decision and its action (the controller case).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rollout_harness import API, Harness, rollout, service, template
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.controller import RolloutController
from headway.steering import rollouts as rollouts_actions

runner = CliRunner()
_register_all()

ARGS = [{"name": "canary-hash"}, {"name": "service"}]
RUN_ARGS = [
    {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
    {"name": "service", "value": "web"},
]
STEP_ANALYSIS = {"analysis": {"templates": [{"templateName": "errors"}], "args": RUN_ARGS}}
BACKGROUND = {"templates": [{"templateName": "errors"}], "args": RUN_ARGS}


def _promote(tmp_path: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app, ["rollouts", "promote", "web", *extra, "--state-dir", str(tmp_path)]
    )
    return result.exit_code, result.output


def _updating(tmp_path: Path, clock: VirtualClock, canary: dict[str, Any]) -> Harness:
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=ARGS))
    h.apply(rollout(canary=canary))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary=canary))
    h.settle()
    return h


def test_promote_refuses_a_failed_step_run_the_controller_has_not_aborted_yet(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _updating(tmp_path, clock, {"steps": [{"setWeight": 25}, STEP_ANALYSIS]})
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    run = f"web-{new}-2-1"
    h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed')
    assert not h.status().get("abort")  # the window: failed, not aborted yet
    before = h.status()
    for extra in ((), ("--full",)):
        code, out = _promote(tmp_path, *extra)
        assert code != 0, out
        assert run in out and "Failed" in out
        assert h.status() == before
    h.settle()
    status = h.status()
    assert status["abort"] is True and status["stableRS"] == stable
    assert h.replica_sets()[new] == 0


def test_promote_refuses_an_errored_background_run(tmp_path: Path, clock: VirtualClock) -> None:
    canary = {"steps": [{"setWeight": 25}, {"pause": {}}], "analysis": BACKGROUND}
    h = _updating(tmp_path, clock, canary)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    h.set_run_phase(f"web-{new}-2", "Error", "prometheus answered 500")
    code, out = _promote(tmp_path)
    assert code != 0 and "Error" in out and "prometheus answered 500" in out
    assert h.status()["pauseConditions"]  # the pause step is still there
    h.settle()
    assert h.status()["abort"] is True and h.status()["stableRS"] == stable


def test_inconclusive_run_is_never_skipped(tmp_path: Path, clock: VirtualClock) -> None:
    h = _updating(tmp_path, clock, {"steps": [{"setWeight": 25}, STEP_ANALYSIS]})
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    run = f"web-{new}-2-1"
    h.set_run_phase(run, "Inconclusive")
    code, out = _promote(tmp_path)  # before the controller paused on it: it would skip
    assert code != 0 and "Inconclusive" in out
    assert h.status()["currentStepIndex"] == 1
    h.settle()
    assert h.status()["message"] == "InconclusiveAnalysis"
    code, out = _promote(tmp_path, "--full")
    assert code != 0 and "--full" in out
    code, out = _promote(tmp_path)  # paused on it: clears the pause, the analysis runs again
    assert code == 0, out
    h.settle()
    assert h.status()["currentStepIndex"] == 1 and h.status()["stableRS"] == stable
    assert sorted(r["metadata"]["name"] for r in h.runs()) == [run, f"{run}.1"]


def _fail_when_about_to_promote(h: Harness, run: str) -> None:
    """The controller hook: the background run fails right after the decision that promotes
    (every step done, the canary fully available), before that decision is carried out."""

    def hook(_key: ObjectKey) -> None:
        status = h.status()
        new = status.get("currentPodHash")
        sets = h.cluster.list("apps/v1", "ReplicaSet", namespace="default")
        ready = any(
            rs["metadata"]["labels"]["rollouts-pod-template-hash"] == new
            and (rs.get("status") or {}).get("availableReplicas") == 4
            for rs in sets
        )
        phase = (h.cluster.get(API, "AnalysisRun", run, "default").get("status") or {}).get("phase")
        if status.get("currentStepIndex") == 2 and ready and phase != "Failed":
            h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed')

    h.controller = RolloutController(h.cluster, h.clock, after_decide=hook)


def test_controller_never_promotes_on_a_run_that_failed_after_its_decision(
    tmp_path: Path, clock: VirtualClock
) -> None:
    canary = {"steps": [{"setWeight": 25}, {"pause": {}}], "analysis": BACKGROUND}
    h = _updating(tmp_path, clock, canary)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    run = f"web-{new}-2"
    h.set_run_phase(run, "Running")
    _fail_when_about_to_promote(h, run)
    code, out = _promote(tmp_path)  # a legitimate promote past the pause step
    assert code == 0, out
    seen: list[str] = []
    for _ in range(40):
        h.step()
        h.kubelet()
        seen.append(str(h.status().get("stableRS")))
    assert set(seen) == {stable}, "the failed revision was promoted"
    status = h.status()
    assert status["abort"] is True and run in status["message"]
    assert h.replica_sets()[new] == 0
    events = h.cluster.list("v1", "Event", namespace="default")
    assert not [e for e in events if e.get("reason") == "RolloutCompleted" and new in e["message"]]


@pytest.mark.parametrize("full", [True, False])
def test_a_promote_written_after_the_failure_still_aborts(
    tmp_path: Path, clock: VirtualClock, full: bool
) -> None:
    """The run fails between promote's last check and its write (its `before_write` test
    hook): the write lands (`promoteFull`, or the step index past the analysis step), and the
    controller judges the failed run before it acts on the promote."""
    canary = {"steps": [{"setWeight": 25}, STEP_ANALYSIS, {"setWeight": 50}]}
    h = _updating(tmp_path, clock, canary)
    stable, new = h.status()["stableRS"], h.status()["currentPodHash"]
    run = f"web-{new}-2-1"

    def fail_the_run() -> None:
        h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed')

    rollouts_actions.promote(h.cluster, "default", "web", full=full, before_write=fail_the_run)
    written = h.status()
    assert written.get("promoteFull") is True if full else written["currentStepIndex"] == 2
    h.settle()
    status = h.status()
    assert status["abort"] is True, status
    assert status["stableRS"] == stable and h.replica_sets()[new] == 0


def test_a_blue_green_promote_full_never_skips_a_failed_post_promotion_run(
    tmp_path: Path, clock: VirtualClock
) -> None:
    blue_green = {
        "activeService": "web-active",
        "autoPromotionEnabled": True,
        "postPromotionAnalysis": {"templates": [{"templateName": "errors"}], "args": RUN_ARGS},
    }
    h = Harness(tmp_path, clock)
    h.apply(template("errors", args=ARGS))
    h.apply(service("web-active"))
    h.apply(rollout(blue_green=blue_green))
    h.settle()
    stable = h.status()["stableRS"]
    clock.advance(5)
    h.apply(rollout(image="app:v2", blue_green=blue_green))
    h.settle()
    (run,) = [r["metadata"]["name"] for r in h.runs()]
    h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed')
    h.patch_status({"promoteFull": True})  # a `promote --full` that landed in the window
    h.settle()
    status = h.status()
    assert status["abort"] is True and status["stableRS"] == stable
