"""`headway rollouts ...` on a real store: each command changes what the kubectl plugin
changes, and the controller reacts; `get` shows the real pod share of a basic canary."""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_harness import Harness, rollout
from typer.testing import CliRunner

from headway.cli import rollouts as cli_rollouts
from headway.cli.main import _register_all, app
from headway.clock import SystemClock, VirtualClock
from headway.cluster.local.api.store import LocalCluster

STEPS = [{"setWeight": 10}, {"pause": {}}, {"setWeight": 60}, {"pause": {}}]
runner = CliRunner()
_register_all()


def _cli(tmp_path: Path, *args: str) -> str:
    result = runner.invoke(app, ["rollouts", *args, "--state-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    return result.output


def _updating(tmp_path: Path, clock: VirtualClock) -> Harness:
    h = Harness(tmp_path, clock)
    h.apply(rollout(replicas=3, canary={"steps": STEPS}))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=3, canary={"steps": STEPS}))
    h.settle()
    return h


def test_get_shows_real_percentage_steps_and_replica_sets(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _updating(tmp_path, clock)
    out = _cli(tmp_path, "get", "web")
    assert "setWeight 10 -> 1 of 4 pods = 25%" in out
    assert "Paused" in out and "CanaryPauseStep" in out
    assert "▶" in out and "pause" in out
    new = h.status()["currentPodHash"]
    assert f"web-{new}" in out
    listing = _cli(tmp_path, "list")
    assert "web" in listing and "1/4" in listing


def test_promote_resumes_then_skips(tmp_path: Path, clock: VirtualClock) -> None:
    h = _updating(tmp_path, clock)
    assert "promoted" in _cli(tmp_path, "promote", "web")
    assert "pauseConditions" not in h.status()
    h.settle()
    assert h.status()["currentStepIndex"] == 3
    _cli(tmp_path, "promote", "web", "--full")
    assert h.status()["promoteFull"] is True
    h.settle()
    assert h.status()["phase"] == "Healthy"


def test_abort_and_retry(tmp_path: Path, clock: VirtualClock) -> None:
    h = _updating(tmp_path, clock)
    _cli(tmp_path, "abort", "web")
    h.settle()
    assert h.status()["phase"] == "Degraded"
    result = runner.invoke(app, ["rollouts", "promote", "web", "--state-dir", str(tmp_path)])
    assert result.exit_code == 1 and "retry" in result.output
    _cli(tmp_path, "retry", "web")
    h.settle()
    assert h.status()["phase"] == "Paused" and h.status()["currentStepIndex"] == 1


def test_pause_set_image_and_undo(tmp_path: Path, clock: VirtualClock) -> None:
    h = _updating(tmp_path, clock)
    first = h.status()["stableRS"]
    _cli(tmp_path, "pause", "web")
    assert h.get()["spec"]["paused"] is True
    h.settle()
    assert h.status()["message"] == "manually paused"
    _cli(tmp_path, "set", "image", "web", "app=app:v3")
    assert h.get()["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v3"
    _cli(tmp_path, "undo", "web", "--to-revision", "1")
    assert h.get()["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v1"
    _cli(tmp_path, "promote", "web")  # unpause
    h.settle()
    status = h.status()
    assert status["currentPodHash"] == first and status["phase"] == "Healthy"


def test_restart_replaces_pods_one_at_a_time(tmp_path: Path, clock: VirtualClock) -> None:
    from headway.cluster.local.workloads.replicasets import sync_replica_sets

    h = Harness(tmp_path, clock)
    h.apply(rollout(replicas=2, canary={"steps": STEPS}))
    h.settle()
    sync_replica_sets(h.cluster, clock)  # real Pods for the ReplicaSet
    before = {p["metadata"]["name"] for p in h.cluster.list("v1", "Pod", namespace="default")}
    assert len(before) == 2
    clock.advance(10)
    ro = h.get()
    ro["spec"]["restartAt"] = "2026-01-01T00:00:10Z"
    h.apply({k: ro[k] for k in ("apiVersion", "kind", "metadata", "spec")})
    for _ in range(6):
        h.step()
        sync_replica_sets(h.cluster, clock)
        h.kubelet()
        clock.advance(1)
    after = {p["metadata"]["name"] for p in h.cluster.list("v1", "Pod", namespace="default")}
    assert len(after) == 2 and not (after & before)
    assert h.status()["restartedAt"] == "2026-01-01T00:00:10Z"


def test_promote_after_inconclusive_runs_the_analysis_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    from rollout_harness import template

    steps = [{"setWeight": 10}, {"analysis": {"templates": [{"templateName": "t"}]}}]
    h = Harness(tmp_path, clock)
    h.apply(template("t"))
    h.apply(rollout(replicas=3, canary={"steps": steps}))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=3, canary={"steps": steps}))
    h.settle()
    first = h.runs()[0]["metadata"]["name"]
    h.set_run_phase(first, "Inconclusive")
    h.settle()
    assert h.status()["message"] == "InconclusiveAnalysis"
    _cli(tmp_path, "promote", "web")
    h.settle()
    assert h.status()["currentStepIndex"] == 1  # the step was not skipped
    assert sorted(r["metadata"]["name"] for r in h.runs()) == [first, f"{first}.1"]


def test_get_shows_runs_with_last_measurements(tmp_path: Path, clock: VirtualClock) -> None:
    from rollout_harness import template

    steps = [{"setWeight": 10}, {"analysis": {"templates": [{"templateName": "t"}]}}]
    h = Harness(tmp_path, clock)
    h.apply(template("t"))
    h.apply(rollout(replicas=3, canary={"steps": steps}))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=3, canary={"steps": steps}))
    h.settle()
    run = h.runs()[0]["metadata"]["name"]
    results = [
        {
            "name": "errors",
            "phase": "Running",
            "measurements": [
                {"phase": "Successful", "value": "[0.002]"},
                {"phase": "Failed", "value": "[0.31]"},
            ],
        }
    ]
    h.cluster.patch_status(
        "argoproj.io/v1alpha1",
        "AnalysisRun",
        run,
        "default",
        {"phase": "Running", "metricResults": results},
    )
    out = _cli(tmp_path, "get", "web")
    assert f"AnalysisRun {run} Running errors=[0.31] (Failed)" in out


def test_a_rollout_in_another_namespace_is_pointed_at(tmp_path: Path, clock: VirtualClock) -> None:
    _updating(tmp_path, clock)
    state = ["--state-dir", str(tmp_path)]
    missing = runner.invoke(app, ["rollouts", "get", "web", "-n", "shop", *state])
    assert missing.exit_code == 1
    assert "rollout shop/web not found; found in namespace default (add -n default)" in (
        missing.output
    )
    empty = runner.invoke(app, ["rollouts", "list", "-n", "shop", *state])
    assert empty.exit_code == 0
    assert "No Rollouts in namespace shop; found in namespace default (add -n default)" in (
        empty.output
    )
    nowhere = runner.invoke(app, ["rollouts", "get", "nope", *state])
    assert nowhere.output.strip() == "error: rollout default/nope not found"


def test_watch_ends_with_one_line_when_the_rollout_is_deleted(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _updating(tmp_path, clock)

    def delete_instead_of_sleeping(_seconds: float) -> None:
        with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
            cluster.delete("argoproj.io/v1alpha1", "Rollout", "web", "default")

    monkeypatch.setattr(cli_rollouts.time, "sleep", delete_instead_of_sleeping)
    result = runner.invoke(app, ["rollouts", "get", "web", "--watch", "--state-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "rollout default/web was deleted" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_malformed_rollout_lists_and_get_says_why_it_is_not_run(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    broken = rollout(name="broken", replicas=2, canary={"steps": STEPS})
    broken["spec"]["strategy"] = 5  # a number where the strategy mapping belongs
    h.apply(broken)
    listing = _cli(tmp_path, "list")
    assert "broken" in listing and "Canary" in listing
    shown = " ".join(_cli(tmp_path, "get", "broken").split())
    assert shown.startswith("InvalidSpec: spec.strategy")
    assert "(the controller does not run it)" in shown


def test_get_shows_the_current_steps_experiment(tmp_path: Path, clock: VirtualClock) -> None:
    from test_rollout_experiment_step import _updated

    h, _, new = _updated(tmp_path, clock)
    exp = h.experiment()
    hashes = {t["name"]: t["podTemplateHash"] for t in exp["status"]["templateStatuses"]}
    out = _cli(tmp_path, "get", "web")
    name = f"web-{new}-2-0"
    assert f"Experiment {name} Running" in out
    assert f"template baseline: ReplicaSet {name}-baseline-{hashes['baseline']} 1/1" in out
    assert f"template canary: ReplicaSet {name}-canary-{hashes['canary']} 2/2" in out
    run = exp["status"]["analysisRuns"][0]
    assert f"AnalysisRun {name}-errors (errors) {run['phase']}" in out
    clock.advance(60)
    h.settle()  # the experiment succeeded: the step is done, nothing current to show
    assert "Experiment" not in _cli(tmp_path, "get", "web")
