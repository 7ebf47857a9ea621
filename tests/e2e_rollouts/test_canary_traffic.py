"""A routed canary of real processes judged by the built-in `headway.dev/traffic` provider on
the real requests the local mesh carried: a good release walks every step to Healthy, a bad
one is aborted and all traffic returns to the stable version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import (
    analysis_step,
    canary_mesh,
    rollout,
    routed_canary,
    template,
    traffic_metric,
)
from e2e_rollouts.stage import FIRST_DEPLOY, ISTIO, Stage, counted_errors, request_versions
from polling import eventually_async

pytestmark = pytest.mark.slow

ERRORS = traffic_metric(
    "error-ratio", "error-ratio", "result[0] < 0.05", interval="2s", count=2, failureLimit=0
)
STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    {"pause": {"duration": "3s"}},
    analysis_step("errors"),
    {"setWeight": 60},
    {"pause": {"duration": "2s"}},
]


async def settled(address: str, versions: set[str]) -> None:
    """The mesh applies the controller's last edit in its next step (docs/local-mesh.md):
    20 consecutive real requests are then all answered by `versions`. How soon is measured in
    bench/, not here: the deadline only bounds a broken run on a loaded machine."""

    async def only() -> bool:
        return set((await request_versions(address, 20)).keys()) == versions

    await eventually_async(only, timeout=30, what=f"requests to {address} only {versions}")


async def _deploy_v1(stage: Stage) -> str:
    stage.apply(template("errors", ERRORS), *canary_mesh(), rollout("v1", routed_canary(STEPS)))
    await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
    address = await stage.until(stage.vs_address, 10, "the mesh address")
    assert set((await request_versions(address, 5)).keys()) == {"v1"}
    return str(address)


async def test_a_good_canary_walks_every_step_to_healthy(tmp_path: Path) -> None:
    async with Stage.open(tmp_path) as stage:
        address = await _deploy_v1(stage)
        traffic = stage.send_traffic(address)
        weights = stage.watch(stage.vs_weights)
        steps = stage.watch(lambda: stage.rollout_status().get("currentStepIndex"))
        stage.apply(rollout("v2", routed_canary(STEPS)))
        await stage.until(lambda: stage.rollout_status().get("currentStepIndex") == 1, 30, "20%")
        mark = len(traffic.answers)
        await stage.until(lambda: stage.rollout_status().get("currentStepIndex") == 3, 30, "60%")
        assert {"v1", "v2"} <= set(traffic.since(mark))  # both served real requests at 20 %
        await stage.until(lambda: stage.rollout_phase() == "Healthy", 40, "v2 Healthy")
        # v2 is stable now: the split goes back to the stable Service (at most one reconcile
        # later: Healthy is written while the weight is still 100 on the canary Service).
        await stage.until(lambda: stage.vs_weights() == [100, 0], 20, "stable Service at 100")
        runs = stage.analysis_runs()
        assert [run["status"]["phase"] for run in runs] == ["Successful"]
        values = [m["value"] for m in runs[0]["status"]["metricResults"][0]["measurements"]]
        assert values == ["[0]", "[0]"]  # real requests answered by v2, none failed
        assert [w for w in weights if w != [100, 0]][:2] == [[80, 20], [40, 60]]
        assert steps[:6] == [5, 0, 1, 2, 3, 4]  # v1's last step, then every step of v2 in order
        assert stage.rollout_status()["currentStepIndex"] == len(STEPS)
        await settled(address, {"v2"})


@pytest.mark.parametrize("router", ["embedded", pytest.param("haproxy", marks=pytest.mark.haproxy)])
async def test_a_bad_canary_is_aborted_and_traffic_returns_to_stable(
    tmp_path: Path, router: str
) -> None:
    async with Stage.open(tmp_path, router=router) as stage:
        await _abort_and_revert(stage, router)


async def test_a_bad_canary_is_aborted_with_the_controllers_on_the_kubernetes_api(
    tmp_path: Path,
) -> None:
    """The same abort and revert with the engine on the kube backend: every read, write,
    status update and watch of the controllers goes through the runtime's Kubernetes API."""
    async with Stage.open(tmp_path, through_api=True) as stage:
        assert stage.runtime.api is not None
        await _abort_and_revert(stage, "embedded")


async def _abort_and_revert(stage: Stage, router: str) -> None:
    address = await _deploy_v1(stage)
    traffic = stage.send_traffic(address)
    stable = stage.pod_hash_of()
    stage.apply(rollout("v2", routed_canary(STEPS), env={"ERROR_RATE": "0.5"}))
    await stage.until(lambda: stage.vs_weights() == [80, 20], 30, "20% to the canary")
    await stage.until(lambda: stage.rollout_phase() == "Degraded", 40, "the abort")
    status = stage.rollout_status()
    (run,) = stage.analysis_runs()
    assert run["status"]["phase"] == "Failed"
    name = run["metadata"]["name"]
    assert name in status["message"] and "error-ratio" in status["message"], status["message"]
    assert status["abort"] is True and status["stableRS"] == stable
    measured = run["status"]["metricResults"][0]["measurements"][-1]
    # Failed on numbers, not on an empty result: the router counted v2's 500s. The ratio
    # itself is a sample (v2 fails each request with probability 0.5), so it is not pinned.
    assert measured["phase"] == "Failed", measured
    assert counted_errors(measured) >= 1, measured
    assert stage.vs_weights() == [100, 0]
    assert (stage.get(ISTIO, "VirtualService", "web") or {})["status"]["router"] == router
    assert traffic.since(0)["500"] > 0  # real users did see the bad version's errors
    await stage.until(lambda: not stage.pods_of("v2"), 20, "the canary's pods gone")
    await settled(address, {"v1"})
