"""The judge on the local runtime: real processes behind the local mesh, real requests, the
router's per-revision counters. A canary failing 5% of requests where stable fails 1% is
aborted by the judge while seed 003's threshold metric, measuring the same canary in the same
run, has not yet failed often enough to; an identical release passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import canary_mesh, rollout, routed_canary
from e2e_rollouts.stage import API, FIRST_DEPLOY, Stage

pytestmark = pytest.mark.slow

HASH_ARGS = [
    {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
    {"name": "stable-hash", "valueFrom": {"podTemplateHashValue": "Stable"}},
]
JUDGE = {
    "name": "judge",
    "provider": {
        "plugin": {
            "headway.dev/judge": {
                "canaryHash": "{{args.canary-hash}}",
                "stableHash": "{{args.stable-hash}}",
                "worseBy": 3,
                "every": "1s",
                "deadline": "4m",
            }
        }
    },
}
# Seed 003's error-rate metric (30 s interval, failureLimit 2, fail at 2%), scoped to the
# canary; its first look waits 5 s so that it measures traffic, not the empty window.
THRESHOLD = {
    "name": "threshold",
    "interval": "30s",
    "initialDelay": "5s",
    "failureLimit": 2,
    "successCondition": "result[0] < 0.02",
    "failureCondition": "result[0] >= 0.02",
    "provider": {
        "plugin": {
            "headway.dev/traffic": {
                "metric": "error-ratio",
                "podTemplateHash": "{{args.canary-hash}}",
                "window": "1m",
            }
        }
    },
}


def template(name: str, *metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "AnalysisTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"args": [{"name": "canary-hash"}, {"name": "stable-hash"}], "metrics": metrics},
    }


def steps(*templates: str) -> list[dict[str, Any]]:
    refs = [{"templateName": name} for name in templates]
    return [
        {"setWeight": 30},
        {"analysis": {"templates": refs, "args": HASH_ARGS}},
        {"setWeight": 100},
    ]


async def _v1_with_traffic(stage: Stage, *templates: str) -> None:
    stage.apply(
        template("judge", JUDGE),
        template("threshold", THRESHOLD),
        *canary_mesh(),
        rollout("v1", routed_canary(steps(*templates)), env={"ERROR_RATE": "0.01"}),
    )
    await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
    address = await stage.until(stage.vs_address, 10, "the mesh address")
    for _ in range(3):  # enough requests for the evidence to build in seconds
        stage.send_traffic(str(address), pause=0.0)


def _metric(run: dict[str, Any], name: str) -> dict[str, Any]:
    """The metric's result; {} when it never measured (the run ended first)."""
    return next((r for r in run["status"]["metricResults"] if r["name"] == name), {})


async def test_the_judge_aborts_a_1_to_5_percent_canary_before_the_threshold_would(
    tmp_path: Path,
) -> None:
    async with Stage.open(tmp_path) as stage:
        await _v1_with_traffic(stage, "judge", "threshold")
        stage.apply(
            rollout("v2", routed_canary(steps("judge", "threshold")), env={"ERROR_RATE": "0.05"})
        )
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 240, "the abort")
        (run,) = stage.analysis_runs()
        assert run["status"]["phase"] == "Failed", run["status"]
        judge, threshold = _metric(run, "judge"), _metric(run, "threshold")
        assert judge["phase"] == "Failed", judge
        (decided,) = judge["measurements"]
        assert "the canary is worse than stable" in decided["message"]
        metadata = decided["metadata"]
        assert float(metadata["judge.logRatio"]) >= float(metadata["judge.failAbove"])
        assert 'metric "judge" assessed Failed' in run["status"]["message"]
        # the threshold metric needs failed > failureLimit (3 failures, 60 s) to abort
        assert int(threshold.get("failed") or 0) <= 2, threshold
        assert stage.vs_weights() == [100, 0]


async def test_the_judge_passes_an_identical_release(tmp_path: Path) -> None:
    async with Stage.open(tmp_path) as stage:
        await _v1_with_traffic(stage, "judge")
        stage.apply(rollout("v2", routed_canary(steps("judge")), env={"ERROR_RATE": "0.01"}))
        await stage.until(lambda: stage.rollout_status().get("currentStepIndex") == 1, 30, "30%")
        await stage.until(lambda: stage.rollout_phase() == "Healthy", 280, "v2 Healthy")
        (run,) = stage.analysis_runs()
        assert run["status"]["phase"] == "Successful"
        (decided,) = _metric(run, "judge")["measurements"]
        assert "no more than 3x worse than stable" in decided["message"]
        metadata = decided["metadata"]
        assert float(metadata["judge.logRatio"]) <= float(metadata["judge.passBelow"])
        assert float(metadata["judge.stable"].split()[0]) > 0  # judged on stable's traffic too
