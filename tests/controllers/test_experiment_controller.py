"""The Experiment controller on a real LocalCluster with a virtual clock: templates run as
ReplicaSets side by side, analyses start once they are available, `duration` ends it, a
failed run fails it, and every template is scaled down at the end."""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

from rollout_harness import API, template

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.experiments import ExperimentController
from headway.kubetime import format_time


def _template(name: str, image: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": "web", "role": name}
    return {
        "name": name,
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "app", "image": image}]}},
    }


def experiment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Experiment",
        "metadata": {"name": "trial", "namespace": "default"},
        "spec": {"templates": [_template("baseline", "app:v1"),
                               _template("canary", "app:v2", replicas=2)], **spec},
    }


class ExperimentHarness:
    def __init__(self, tmp_path: Path, clock: VirtualClock) -> None:
        self.clock = clock
        self.cluster = LocalCluster(tmp_path / "cluster.db", clock)
        self.controller = ExperimentController(self.cluster, clock)

    def apply(self, obj: dict[str, Any]) -> None:
        self.cluster.apply(copy.deepcopy(obj), field_manager="test", force=True)

    def kubelet(self) -> None:
        for rs in self.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
            want = int(rs["spec"].get("replicas", 0))
            status = {"replicas": want, "readyReplicas": want, "availableReplicas": want}
            if (rs.get("status") or {}) != status:
                self.cluster.patch_status("apps/v1", "ReplicaSet", rs["metadata"]["name"],
                                          "default", status)

    def settle(self) -> float | None:
        wake = None
        for _ in range(10):
            wake = self.controller.step(ObjectKey("default", "trial"))
            self.kubelet()
        return wake

    def status(self) -> dict[str, Any]:
        return dict(self.cluster.get(API, "Experiment", "trial", "default").get("status") or {})

    def replica_sets(self) -> dict[str, int]:
        return {rs["metadata"]["name"]: rs["spec"]["replicas"]
                for rs in self.cluster.list("apps/v1", "ReplicaSet", namespace="default")}

    def run_phase(self, name: str, phase: str, message: str = "") -> None:
        run = self.cluster.get(API, "AnalysisRun", name, "default")
        status = {**(run.get("status") or {}), "phase": phase, "message": message}
        self.cluster.patch_status(API, "AnalysisRun", name, "default", status)


ANALYSES = [{"name": "errors", "templateName": "errors",
             "args": [{"name": "service", "value": "web-canary"}]}]


def test_templates_run_side_by_side_then_the_duration_ends_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(experiment(duration="60s", analyses=ANALYSES))
    wake = h.settle()
    status = h.status()
    assert status["phase"] == "Running" and wake == 60
    sets = h.replica_sets()
    assert sorted(sets.values()) == [1, 2]
    assert all(name.startswith(("trial-baseline-", "trial-canary-")) for name in sets)
    assert [(t["name"], t["status"], t["availableReplicas"]) for t in status["templateStatuses"]
            ] == [("baseline", "Running", 1), ("canary", "Running", 2)]
    run = h.cluster.get(API, "AnalysisRun", "trial-errors", "default")
    assert run["spec"]["args"] == [{"name": "service", "value": "web-canary"}]
    assert run["metadata"]["ownerReferences"][0]["kind"] == "Experiment"
    assert status["analysisRuns"] == [
        {"name": "errors", "analysisRun": "trial-errors", "phase": "Pending"}]
    clock.advance(59)
    h.settle()
    assert h.status()["phase"] == "Running"
    clock.advance(1)
    h.settle()
    status = h.status()
    assert status["phase"] == "Successful"
    assert h.cluster.get(API, "AnalysisRun", "trial-errors", "default")["spec"]["terminate"]
    # scaleDownDelaySeconds defaults to 30: the templates stay up that long, stamped with when
    # they go.
    assert sorted(h.replica_sets().values()) == [1, 2]
    deadlines = {(rs["metadata"].get("annotations") or {}).get("scale-down-deadline")
                 for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default")}
    assert deadlines == {format_time(clock.now() + timedelta(seconds=30))}
    clock.advance(29)
    assert h.settle() == 1
    assert sorted(h.replica_sets().values()) == [1, 2]
    clock.advance(1)
    h.settle()
    assert sorted(h.replica_sets().values()) == [0, 0]


def test_a_failed_analysis_fails_the_experiment(tmp_path: Path, clock: VirtualClock) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(experiment(duration="10m", analyses=ANALYSES, scaleDownDelaySeconds=0))
    h.settle()
    h.run_phase("trial-errors", "Failed", 'Metric "errors" assessed Failed')
    h.settle()
    status = h.status()
    assert status["phase"] == "Failed"
    assert status["message"] == (
        "AnalysisRun 'trial-errors' phase Failed: Metric \"errors\" assessed Failed")
    assert [t["status"] for t in status["templateStatuses"]] == ["Failed", "Failed"]
    assert sorted(h.replica_sets().values()) == [0, 0]


def test_without_a_duration_the_required_analyses_end_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(experiment(analyses=[{**ANALYSES[0], "requiredForCompletion": True}]))
    h.settle()
    assert h.status()["phase"] == "Running"
    h.run_phase("trial-errors", "Successful")
    h.settle()
    assert h.status()["phase"] == "Successful"


def test_pending_until_every_template_is_available(tmp_path: Path, clock: VirtualClock) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(experiment(duration="60s"))
    h.controller.step(ObjectKey("default", "trial"))
    h.controller.step(ObjectKey("default", "trial"))
    status = h.status()
    assert status["phase"] == "Pending" and "availableAt" not in status
    assert [t["status"] for t in status["templateStatuses"]] == ["Progressing", "Progressing"]


def test_a_template_not_available_within_the_progress_deadline_fails_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """No kubelet: the canary template never gets a pod. Argo fails the experiment once
    progressDeadlineSeconds pass without progress; before that it stays Pending."""
    h = ExperimentHarness(tmp_path, clock)
    h.apply(experiment(duration="60s", progressDeadlineSeconds=120, scaleDownDelaySeconds=0))
    wake = h.controller.step(ObjectKey("default", "trial"))
    assert wake == 120
    clock.advance(119)
    h.controller.step(ObjectKey("default", "trial"))
    assert h.status()["phase"] == "Pending"
    clock.advance(1)
    h.controller.step(ObjectKey("default", "trial"))
    status = h.status()
    assert status["phase"] == "Failed"
    assert status["message"] == "Template 'baseline' exceeded its progressDeadlineSeconds (120)"
    assert status["templateStatuses"][0]["message"] == status["message"]
    assert sorted(h.replica_sets().values()) == [0, 0]


def test_progress_restarts_the_deadline(tmp_path: Path, clock: VirtualClock) -> None:
    """A pod becoming available is progress: the deadline counts from then, not from the start."""
    h = ExperimentHarness(tmp_path, clock)
    h.apply(experiment(progressDeadlineSeconds=120))
    h.controller.step(ObjectKey("default", "trial"))
    names = {n.split("-")[1]: n for n in h.replica_sets()}
    h.cluster.patch_status("apps/v1", "ReplicaSet", names["baseline"], "default",
                           {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1})
    clock.advance(100)
    h.cluster.patch_status("apps/v1", "ReplicaSet", names["canary"], "default",
                           {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1})
    h.controller.step(ObjectKey("default", "trial"))
    clock.advance(119)  # 219 s from the start, 119 s since the canary's first pod came up
    assert h.controller.step(ObjectKey("default", "trial")) == 1
    assert h.status()["phase"] == "Pending"
    clock.advance(1)
    h.controller.step(ObjectKey("default", "trial"))
    status = h.status()
    assert (status["phase"], status["message"]) == (
        "Failed", "Template 'canary' exceeded its progressDeadlineSeconds (120)")


def test_runs_carry_dry_run_and_the_run_metadata(tmp_path: Path, clock: VirtualClock) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(experiment(analyses=ANALYSES, dryRun=[{"metricName": "errors"}],
                       analysisRunMetadata={"labels": {"team": "payments"},
                                            "annotations": {"owner": "sre"}}))
    h.settle()
    run = h.cluster.get(API, "AnalysisRun", "trial-errors", "default")
    assert run["spec"]["dryRun"] == [{"metricName": "errors"}]
    assert run["metadata"]["labels"]["team"] == "payments"
    assert run["metadata"]["labels"]["experiment"] == "trial"
    assert run["metadata"]["annotations"] == {"owner": "sre"}
