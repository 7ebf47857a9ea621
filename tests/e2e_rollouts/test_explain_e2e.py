"""`headway explain rollout` after a real abort: a bad canary judged through a REAL Prometheus
by an engine that keeps its decision journal in the runtime's state directory; the story has
every measurement Prometheus answered, the query as it ran (scoped to the canary's hash), the
condition, and the verdict that aborted the Rollout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from e2e_rollouts.manifests import rollout, routed_canary
from e2e_rollouts.stage import Stage
from e2e_rollouts.test_prometheus_analysis import ERROR_RATIO, STEPS, _start
from headway.cli.main import app as cli
from prometheus_support import StartPrometheus

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]


async def test_the_abort_is_explained_from_the_journal(
    tmp_path: Path, prometheus: StartPrometheus
) -> None:
    async with Stage.open(tmp_path) as stage:
        await _start(stage, prometheus, ERROR_RATIO, count=3)
        stage.apply(rollout("v2", routed_canary(STEPS), env={"ERROR_RATE": "0.5"}))
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 40, "the abort")
        (run,) = stage.analysis_runs()
        kept = run["status"]["metricResults"][0]["measurements"]
        canary = stage.rollout_status()["currentPodHash"]
        result = CliRunner().invoke(
            cli, ["explain", "rollout", "web", "--state-dir", str(stage.state_dir), "-o", "json"]
        )
    assert result.exit_code == 0, result.output
    story = json.loads(result.output)
    assert "journal" in story["sources"]
    told = [x["data"] for x in story["lines"] if x["type"] == "measurement"]
    assert [(m["value"], m["phase"]) for m in told] == [(m["value"], m["phase"]) for m in kept]
    query = told[-1]["metadata"]["ResolvedPrometheusQuery"]
    assert f'rollouts_pod_template_hash="{canary}"' in query
    assert told[-1]["judgedBy"]["successCondition"] == "result[0] < 0.05"
    verdict = next(x for x in story["lines"] if x["type"] == "verdict")
    assert verdict["data"]["phase"] == "Failed" and "error-ratio" in verdict["text"]
    assert story["outcome"].startswith("aborted")
