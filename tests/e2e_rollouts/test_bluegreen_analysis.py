"""Blue-green of real processes with pre- and post-promotion analysis on real traffic: each
Service is reached through its own Istio VirtualService on the local mesh, so the built-in
traffic provider sees the requests per pod-template hash. v2 answers quickly (pre-promotion
latency passes, so it is promoted) but fails half its requests: the post-promotion analysis
fails and the active Service is switched back to v1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import (
    CANARY_HASH_ARG,
    rollout,
    service,
    template,
    traffic_metric,
    virtual_service,
)
from e2e_rollouts.stage import FIRST_DEPLOY, Stage
from e2e_rollouts.test_canary_traffic import settled

pytestmark = pytest.mark.slow

LATENCY = traffic_metric(
    "latency-p99", "latency-p99", "result[0] < 1", initialDelay="2s", interval="2s", count=2
)
ERRORS = traffic_metric(
    "error-ratio",
    "error-ratio",
    "result[0] < 0.05",
    initialDelay="2s",
    interval="2s",
    count=2,
    failureLimit=0,
)


def _analysis(name: str) -> dict[str, Any]:
    return {"templates": [{"templateName": name}], "args": CANARY_HASH_ARG}


STRATEGY = {
    "blueGreen": {
        "activeService": "web-active",
        "previewService": "web-preview",
        "autoPromotionEnabled": True,
        "prePromotionAnalysis": _analysis("preview-latency"),
        "postPromotionAnalysis": _analysis("active-errors"),
        "scaleDownDelaySeconds": 30,
        "abortScaleDownDelaySeconds": 1,
    }
}


def _active_hash(stage: Stage) -> str:
    active = stage.get("v1", "Service", "web-active") or {}
    selector = (active.get("spec") or {}).get("selector") or {}
    return str(selector.get("rollouts-pod-template-hash") or "")


def _run_phases(stage: Stage) -> dict[str, str]:
    runs = stage.analysis_runs()
    return {
        run["metadata"]["labels"]["rollout-type"]: (run.get("status") or {}).get("phase", "")
        for run in runs
    }


async def test_failing_post_promotion_analysis_switches_the_active_service_back(
    tmp_path: Path,
) -> None:
    async with Stage.open(tmp_path) as stage:
        stage.apply(
            template("preview-latency", LATENCY),
            template("active-errors", ERRORS),
            service("web-active"),
            service("web-preview"),
            virtual_service("active", [("web-active", 100)]),
            virtual_service("preview", [("web-preview", 100)]),
            rollout("v1", STRATEGY),
        )
        await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
        active = str(await stage.until(lambda: stage.vs_address("active"), 10, "active address"))
        preview = str(await stage.until(lambda: stage.vs_address("preview"), 10, "preview"))
        blue = _active_hash(stage)
        assert blue == stage.pod_hash_of()
        stage.send_traffic(active)
        stage.send_traffic(preview)
        selectors = stage.watch(lambda: _active_hash(stage), every=0.05)
        stage.apply(rollout("v2", STRATEGY, env={"ERROR_RATE": "0.5"}))
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 50, "the abort")
        assert _run_phases(stage) == {"PrePromotion": "Successful", "PostPromotion": "Failed"}
        green = stage.rollout_status()["currentPodHash"]
        assert green != blue
        history = [*selectors, _active_hash(stage)]  # the last switch may not be sampled yet
        changes = [h for i, h in enumerate(history) if i == 0 or history[i - 1] != h]
        assert changes == [blue, green, blue]  # promoted to v2, then switched back
        status = stage.rollout_status()
        (post,) = [r for r in stage.analysis_runs() if r["metadata"]["name"].endswith("-post")]
        message = status["message"]
        assert post["metadata"]["name"] in message and "error-ratio" in message, message
        assert status["stableRS"] == blue and _active_hash(stage) == blue
        await settled(active, {"v1"})
