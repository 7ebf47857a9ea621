"""`headway rollouts list/get/status` as scripts and CI jobs use them: whole names in a pipe,
the pause that really holds a rollout, and `status` exit codes as kubectl-argo-rollouts."""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_harness import Harness, rollout, template
from typer.testing import CliRunner

from headway.cli import rollouts as cli_rollouts
from headway.cli.main import _register_all, app
from headway.clock import VirtualClock

runner = CliRunner()
_register_all()
LONG = "checkout-payments-authorization-gateway-eu-west"


def cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["rollouts", *args, "--state-dir", str(tmp_path)])
    return result.exit_code, result.output


def test_list_keeps_long_names_whole_when_piped(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(name=LONG, replicas=1))
    h.settle(LONG)
    code, out = cli(tmp_path, "list")  # CliRunner's output is not a terminal
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == [
        "NAME", "STRATEGY", "STATUS", "STEP", "DESIRED", "CURRENT", "UP-TO-DATE", "AVAILABLE"
    ]
    assert row.split()[:3] == [LONG, "Canary", "Healthy"]


def test_list_all_namespaces(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(name="web", replicas=1))
    h.settle("web")
    code, out = cli(tmp_path, "list", "-A")
    assert code == 0
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["NAMESPACE", "NAME"], ["default", "web"]
    ]
    assert cli(tmp_path, "list", "-n", "shop")[1].startswith("No Rollouts in namespace shop")


def paused_on_step_then_inconclusive(tmp_path: Path, clock: VirtualClock) -> Harness:
    """A canary paused by its `pause: {}` step whose background analysis then goes
    Inconclusive: both pauses hold it, the step's first."""
    h = Harness(tmp_path, clock)
    canary = {
        "steps": [{"setWeight": 25}, {"pause": {}}],
        "analysis": {"templates": [{"templateName": "t"}]},
    }
    h.apply(template("t"))
    h.apply(rollout(replicas=4, canary=canary))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=4, canary=canary))
    h.settle()
    assert [p["reason"] for p in h.status()["pauseConditions"]] == ["CanaryPauseStep"]
    h.set_run_phase(h.runs()[0]["metadata"]["name"], "Inconclusive")
    h.settle()
    return h


def test_get_shows_the_inconclusive_analysis_that_holds_the_rollout(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = paused_on_step_then_inconclusive(tmp_path, clock)
    reasons = [p["reason"] for p in h.status()["pauseConditions"]]
    assert reasons == ["CanaryPauseStep", "InconclusiveAnalysis"]
    assert h.status()["message"] == "InconclusiveAnalysis"
    code, out = cli(tmp_path, "get", "web")
    assert code == 0
    message = next(line for line in out.splitlines() if line.startswith("Message:"))
    assert message.split() == ["Message:", "InconclusiveAnalysis"]
    pauses = next(line for line in out.splitlines() if "Pauses:" in line)
    assert "InconclusiveAnalysis" in pauses and "CanaryPauseStep" in pauses


def test_status_of_a_healthy_rollout_exits_zero(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(replicas=1))
    h.settle()
    assert cli(tmp_path, "status", "web") == (0, "Healthy\n")
    assert cli(tmp_path, "status", "web", "--no-watch") == (0, "Healthy\n")


def test_status_times_out_on_a_paused_rollout(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    paused_on_step_then_inconclusive(tmp_path, clock)
    code, out = cli(tmp_path, "status", "web", "--no-watch")
    assert (code, out) == (0, "Paused - InconclusiveAnalysis\n")
    # The wait's clock is the test's: each poll moves it on by the poll interval.
    monkeypatch.setattr(cli_rollouts.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(cli_rollouts.time, "sleep", clock.advance)
    code, out = cli(tmp_path, "status", "web", "--timeout", "3s")
    assert code == 1
    assert out.splitlines() == [
        "Paused - InconclusiveAnalysis",
        "error: Rollout status watch exceeded timeout",
    ]


def test_status_follows_a_rollout_until_it_is_degraded(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = Harness(tmp_path, clock)
    steps = [{"setWeight": 25}, {"analysis": {"templates": [{"templateName": "t"}]}}]
    h.apply(template("t"))
    h.apply(rollout(replicas=4, canary={"steps": steps}))
    h.settle()
    clock.advance(1)
    h.apply(rollout(image="app:v2", replicas=4, canary={"steps": steps}))
    polls: list[float] = []

    def controller_steps_between_polls(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 2:  # the analysis fails while the CLI waits
            h.set_run_phase(h.runs()[0]["metadata"]["name"], "Failed", "errors too high")
        h.settle()

    monkeypatch.setattr(cli_rollouts.time, "sleep", controller_steps_between_polls)
    code, out = cli(tmp_path, "status", "web", "--timeout", "10m")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("Progressing")  # the new spec, not yet observed or stepped
    assert lines[-2].startswith("Degraded - RolloutAborted")
    assert lines[-1].startswith("error: The rollout is in a degraded state with message: ")
    assert "errors too high" in lines[-1]


def test_status_usage_errors(tmp_path: Path, clock: VirtualClock) -> None:
    Harness(tmp_path, clock).apply(rollout(replicas=1))
    assert cli(tmp_path, "status", "web", "--timeout", "soon")[0] == 2
    code, out = cli(tmp_path, "status", "nope")
    assert code == 1 and "rollout default/nope not found" in out
