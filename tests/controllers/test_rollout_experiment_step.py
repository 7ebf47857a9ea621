"""A canary `experiment` step: the Rollout creates an Experiment of its stable and canary
templates, waits for it, goes on when it succeeds and aborts when it fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import API, Harness, rollout, template

from headway.clock import VirtualClock
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.experiments import ExperimentController

EXPERIMENT = {
    "duration": "60s",
    "templates": [{"name": "baseline", "specRef": "stable"},
                  {"name": "canary", "specRef": "canary", "replicas": 2}],
    "analyses": [{"name": "errors", "templateName": "errors",
                  "args": [{"name": "service", "valueFrom": {"podTemplateHashValue": "Latest"}}]}],
}
STEPS = [{"experiment": EXPERIMENT}, {"setWeight": 50}, {"pause": {}}]


class BothHarness(Harness):
    def __init__(self, tmp_path: Path, clock: VirtualClock) -> None:
        super().__init__(tmp_path, clock)
        self.experiments = ExperimentController(self.cluster, clock)

    def step(self, name: str = "web") -> float | None:
        wake = super().step(name)
        for exp in self.cluster.list(API, "Experiment", namespace="default"):
            self.experiments.step(ObjectKey("default", exp["metadata"]["name"]))
        return wake

    def experiment(self) -> dict[str, Any]:
        [found] = self.cluster.list(API, "Experiment", namespace="default")
        return found


def _updated(tmp_path: Path, clock: VirtualClock) -> tuple[BothHarness, str, str]:
    h = BothHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    stable = h.status()["stableRS"]
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    return h, stable, h.status()["currentPodHash"]


def test_the_experiment_runs_both_templates_and_its_success_moves_on(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, stable, new = _updated(tmp_path, clock)
    exp = h.experiment()
    name = f"web-{new}-2-0"
    assert exp["metadata"]["name"] == name
    assert exp["metadata"]["ownerReferences"][0]["kind"] == "Rollout"
    images = {t["name"]: t["template"]["spec"]["containers"][0]["image"]
              for t in exp["spec"]["templates"]}
    assert images == {"baseline": "app:v1", "canary": "app:v2"}
    assert exp["spec"]["analyses"][0]["args"] == [{"name": "service", "value": new}]
    assert exp["status"]["phase"] == "Running"
    status = h.status()
    assert status["currentStepIndex"] == 0 and status["canary"]["currentExperiment"] == name
    assert h.replica_sets()[stable] == 4  # the experiment's pods are beside, not instead
    clock.advance(60)
    h.settle()
    status = h.status()
    assert h.experiment()["status"]["phase"] == "Successful"
    assert status["currentStepIndex"] == 2 and status["phase"] == "Paused"
    assert "currentExperiment" not in status["canary"]


def test_a_failed_experiment_aborts_the_rollout(tmp_path: Path, clock: VirtualClock) -> None:
    h, stable, new = _updated(tmp_path, clock)
    run = f"web-{new}-2-0-errors"
    found = h.cluster.get(API, "AnalysisRun", run, "default")
    h.cluster.patch_status(API, "AnalysisRun", run, "default",
                           {**(found.get("status") or {}), "phase": "Failed",
                            "message": 'Metric "errors" assessed Failed'})
    h.settle()
    status = h.status()
    assert status["abort"] is True and status["phase"] == "Degraded"
    assert status["message"] == (
        f"RolloutAborted: Rollout aborted update to revision 2: Experiment 'web-{new}-2-0' "
        f"phase Failed: AnalysisRun '{run}' phase Failed: Metric \"errors\" assessed Failed")
    assert h.replica_sets()[stable] == 4 and h.replica_sets()[new] == 0
    experiment_sets = [rs for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default")
                       if rs["metadata"]["name"].startswith(f"web-{new}-2-0-")]
    assert len(experiment_sets) == 2
    clock.advance(30)  # the Experiment's default scaleDownDelaySeconds
    h.settle()
    experiment_sets = [rs for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default")
                       if rs["metadata"]["name"].startswith(f"web-{new}-2-0-")]
    assert all(rs["spec"]["replicas"] == 0 for rs in experiment_sets)


def test_a_new_template_terminates_the_running_experiment(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, _stable, _new = _updated(tmp_path, clock)
    h.apply(rollout(image="app:v3", canary={"steps": STEPS}))
    h.settle()
    experiments = {e["metadata"]["name"]: e for e in
                   h.cluster.list(API, "Experiment", namespace="default")}
    assert len(experiments) == 2
    old = [e for e in experiments.values() if e["spec"].get("terminate")]
    assert len(old) == 1 and old[0]["status"]["phase"] == "Successful"


def test_the_step_passes_its_settings_and_the_rollout_deadline_to_the_experiment(
    tmp_path: Path, clock: VirtualClock
) -> None:
    step = {**EXPERIMENT, "dryRun": [{"metricName": "errors"}], "scaleDownDelaySeconds": 5,
            "analysisRunMetadata": {"labels": {"team": "payments"}}}
    h = BothHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(rollout(canary={"steps": [{"experiment": step}]}, progressDeadlineSeconds=90))
    h.settle()
    h.apply(rollout(image="app:v2", canary={"steps": [{"experiment": step}]},
                    progressDeadlineSeconds=90))
    h.settle()
    spec = h.experiment()["spec"]
    assert (spec["progressDeadlineSeconds"], spec["scaleDownDelaySeconds"]) == (90, 5)
    run = h.cluster.list(API, "AnalysisRun", namespace="default")[0]
    assert run["spec"]["dryRun"] == [{"metricName": "errors"}]
    assert run["metadata"]["labels"]["team"] == "payments"


def test_background_analysis_keeps_running_through_the_experiment_step(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """As Argo: the canary's background analysis is not paused or replaced by an experiment
    step. It starts with the update and, when it fails mid-experiment, the rollout aborts and the
    Experiment is terminated."""
    background = {"templates": [{"templateName": "errors"}],
                  "args": [{"name": "service", "value": "web"}]}
    canary = {"steps": STEPS, "analysis": background}
    h = BothHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(rollout(canary=canary))
    h.settle()
    h.apply(rollout(image="app:v2", canary=canary))
    h.settle()
    new = h.status()["currentPodHash"]
    assert h.status()["canary"]["currentExperiment"] == f"web-{new}-2-0"
    background_run = f"web-{new}-2"
    found = h.cluster.get(API, "AnalysisRun", background_run, "default")
    assert found["metadata"]["labels"]["rollout-type"] == "Background"
    h.cluster.patch_status(API, "AnalysisRun", background_run, "default",
                           {**(found.get("status") or {}), "phase": "Failed",
                            "message": 'Metric "errors" assessed Failed'})
    h.settle()
    status = h.status()
    assert status["abort"] is True
    assert "Background analysis run" in status["message"]
    assert h.experiment()["spec"].get("terminate") is True
