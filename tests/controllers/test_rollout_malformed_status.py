"""A malformed Rollout status written through the API is reported, never acted on.

The status is the controller's memory (the step reached, the pauses, the abort). When
someone writes garbage there, the controller names the field in an InvalidSpec condition,
changes nothing else, and does not fail (a traceback per retry is what it did before).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rollout_harness import API, Harness, rollout
from test_rollout_analysis import _update as update_waiting_on_an_analysis_step
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock

runner = CliRunner()
_register_all()
STEPS = [{"setWeight": 25}, {"pause": {}}, {"setWeight": 50}, {"pause": {}}]


def _paused_update(tmp_path: Path, clock: VirtualClock) -> Harness:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    assert h.status()["pauseConditions"], "the update should wait at the first pause"
    return h


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"canary": False}, "status.canary"),
        ({"canary": "x"}, "status.canary"),
        ({"canary": {"weights": 3}}, "status.canary.weights"),
        ({"pauseConditions": 5}, "status.pauseConditions"),
        ({"pauseConditions": ["x"]}, "status.pauseConditions[0]"),
        ({"conditions": 5}, "status.conditions"),
        ({"blueGreen": []}, "status.blueGreen"),
        ({"currentStepIndex": "two"}, "status.currentStepIndex"),
        ({"abort": "yes"}, "status.abort"),
        ({"availableReplicas": "many"}, "status.availableReplicas"),
        ({"stableRS": 7}, "status.stableRS"),
    ],
)
def test_malformed_status_is_named_and_not_acted_on(
    tmp_path: Path, clock: VirtualClock, changes: dict[str, Any], field: str
) -> None:
    h = _paused_update(tmp_path, clock)
    before = h.replica_sets()
    h.patch_status(changes)
    assert h.step() is None  # no traceback, and no retry loop
    status = h.status()
    invalid = h.condition("InvalidSpec")
    assert field in invalid["message"], invalid
    assert status["phase"] == "Degraded"
    assert h.replica_sets() == before
    events = h.cluster.list("v1", "Event", namespace="default")
    warned = [e for e in events if e.get("reason") == "InvalidSpec"]
    assert warned and field in warned[0]["message"]
    for key, value in changes.items():
        if key != "conditions":
            assert status[key] == value  # left for whoever wrote it to see and mend


def test_mended_status_lets_the_rollout_go_on(tmp_path: Path, clock: VirtualClock) -> None:
    h = _paused_update(tmp_path, clock)
    good = h.status()["pauseConditions"]
    h.patch_status({"pauseConditions": 5})
    h.step()
    h.patch_status({"pauseConditions": good})
    h.settle()
    status = h.status()
    assert status["phase"] == "Paused"
    assert all(c["type"] != "InvalidSpec" for c in status["conditions"])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"pauseConditions": 5}, "status.pauseConditions"),
        ({"conditions": 5, "canary": "x"}, "status.conditions"),
        ({"currentStepIndex": "two"}, "status.currentStepIndex"),
    ],
)
def test_the_cli_views_show_a_malformed_status_instead_of_failing(
    tmp_path: Path, clock: VirtualClock, changes: dict[str, Any], field: str
) -> None:
    h = _paused_update(tmp_path, clock)
    h.patch_status(changes)
    shown = runner.invoke(app, ["rollouts", "get", "web", "--state-dir", str(tmp_path)])
    assert shown.exception is None, shown.output
    assert f"InvalidSpec: {field}: expected" in " ".join(shown.output.split())
    described = runner.invoke(app, ["describe", "rollout", "web", "--state-dir", str(tmp_path)])
    assert described.exception is None, described.output
    assert "Conditions:" in described.output


@pytest.mark.parametrize("run_status", [{"metricResults": 5}, {"metricResults": ["x"]}])
def test_a_malformed_analysis_run_status_reads_as_undecided(
    tmp_path: Path, clock: VirtualClock, run_status: dict[str, Any]
) -> None:
    """The Rollout controller reads its runs' status too: garbage there is a run that has
    not decided (the step waits), never a traceback."""
    h, _stable, _new = update_waiting_on_an_analysis_step(tmp_path, clock)
    (run,) = h.runs()
    h.cluster.patch_status(API, "AnalysisRun", run["metadata"]["name"], "default", run_status)
    h.settle()
    assert h.status()["phase"] == "Progressing"
    assert h.status()["currentStepIndex"] == 1
