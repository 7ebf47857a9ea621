"""`setMirrorRoute` end to end with real traffic on the local runtime: real pods of
examples/app, the Rollout controller writing the mirror route into the VirtualService (as
Argo's Istio reconciler does), and the local mesh copying real requests to the canary.

Shaped after argo-rollouts `examples/istio/istio-mirror.yaml` (a mirror step at 0 % weight
with `method` and `path` matches and a percentage, `managedRoutes` naming the route, a
`setCanaryScale` so the canary has pods), written for the demo app. The canary serves no
client: every answer comes from the stable version, while the mesh counts exactly
N x percentage copies answered by the canary's pods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from e2e_rollouts.manifests import canary_mesh, rollout, routed_canary
from e2e_rollouts.stage import FIRST_DEPLOY, ISTIO, Stage, request_versions
from headway.steering import rollouts
from polling import eventually_async

pytestmark = pytest.mark.slow

MIRROR = {
    "name": "shadow",
    "percentage": 50,
    "match": [{"method": {"exact": "GET"}, "path": {"prefix": "/"}}],
}
STEPS: list[dict[str, Any]] = [
    {"setCanaryScale": {"replicas": 1}},  # at weight 0 the canary would have no pod to copy to
    {"setMirrorRoute": MIRROR},
    {"pause": {}},
    {"setMirrorRoute": {"name": "shadow"}},
    {"pause": {}},
]


def _strategy() -> dict[str, Any]:
    strategy = routed_canary(STEPS)
    strategy["canary"]["trafficRouting"]["managedRoutes"] = [{"name": "shadow"}]
    return strategy


async def _copies(stage: Stage) -> dict[str, int]:
    """Mirrored requests the mesh counted, per (answering pod hash, code)."""
    assert stage.runtime.mesh is not None
    async with httpx2.AsyncClient(timeout=5) as client:
        text = (await client.get(f"http://{stage.runtime.mesh.metrics_address}/metrics")).text
    counted: dict[str, int] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "headway_requests_total" and sample.labels["route"] == "shadow":
                key = f"{sample.labels['rollouts_pod_template_hash']} {sample.labels['code']}"
                counted[key] = counted.get(key, 0) + int(sample.value)
    return counted


def _mirror_realized(stage: Stage, present: bool) -> bool:
    vs = stage.get(ISTIO, "VirtualService", "web") or {}
    status = vs.get("status") or {}
    written = any(r.get("mirror") for r in (vs.get("spec") or {}).get("http") or [])
    realized = bool(status.get("mirrorRoutes"))
    current = status.get("observedGeneration") == vs.get("metadata", {}).get("generation")
    return current and written == present and realized == present


async def _v2_paused_at(stage: Stage, index: int) -> None:
    await stage.until(
        lambda: stage.rollout_status().get("currentStepIndex") == index
        and stage.rollout_phase() == "Paused",
        40,
        f"v2 paused at step {index}",
    )


async def _mirroring_v2(stage: Stage) -> tuple[str, str]:
    """v1 Healthy, then v2 paused behind the mirror step; (address, v2's pod hash)."""
    stage.apply(*canary_mesh(), rollout("v1", _strategy()))
    await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
    stage.apply(rollout("v2", _strategy()))
    await _v2_paused_at(stage, 2)
    await stage.until(lambda: _mirror_realized(stage, True), 30, "the mirror realized")
    address = await stage.until(stage.vs_address, 10, "the mesh address")
    return str(address), stage.pod_hash_of(which="currentPodHash")


async def _counted(stage: Stage, expected: dict[str, int]) -> None:
    seen: list[dict[str, int]] = []

    async def reached() -> bool:
        seen.append(await _copies(stage))
        return seen[-1] == expected

    try:
        await eventually_async(reached, timeout=30, what=f"mirrored copies {expected}")
    except AssertionError as error:
        raise AssertionError(f"{error}; the mesh counted {seen[-1]}") from None


@pytest.mark.parametrize("through_api", [False, True], ids=["local", "kube-api"])
async def test_a_mirror_step_copies_half_the_requests_to_the_canary(
    tmp_path: Path, through_api: bool
) -> None:
    async with Stage.open(tmp_path, through_api=through_api) as stage:
        address, canary_hash = await _mirroring_v2(stage)
        assert stage.vs_weights()[-2:] == [100, 0]  # the mirror route first, at 0 %
        assert await request_versions(address, 40) == {"v1": 40}  # every answer from stable
        await _counted(stage, {f"{canary_hash} 200": 20})  # 40 x 50 %, answered by v2's pods

        rollouts.promote(stage.cluster, "default", "web")  # the next step removes the mirror
        await _v2_paused_at(stage, 4)
        await stage.until(lambda: _mirror_realized(stage, False), 30, "the mirror removed")
        assert await request_versions(address, 20) == {"v1": 20}
        rollouts.promote(stage.cluster, "default", "web")
        await stage.until(lambda: stage.rollout_phase() == "Healthy", 40, "v2 Healthy")
        assert await _copies(stage) == {f"{canary_hash} 200": 20}  # no copy after the removal


async def test_an_abort_removes_the_mirror_route(tmp_path: Path) -> None:
    async with Stage.open(tmp_path) as stage:
        address, canary_hash = await _mirroring_v2(stage)
        assert await request_versions(address, 10) == {"v1": 10}
        await _counted(stage, {f"{canary_hash} 200": 5})
        rollouts.abort(stage.cluster, "default", "web")
        await stage.until(lambda: stage.rollout_phase() == "Degraded", 30, "the abort")
        await stage.until(lambda: _mirror_realized(stage, False), 30, "the mirror removed")
        vs = stage.get(ISTIO, "VirtualService", "web") or {}
        assert [r.get("name") for r in vs["spec"]["http"]] == ["primary"]
        assert await request_versions(address, 10) == {"v1": 10}
        assert await _copies(stage) == {f"{canary_hash} 200": 5}


def _vs_router(stage: Stage) -> str:
    vs = stage.get(ISTIO, "VirtualService", "web") or {}
    return str((vs.get("status") or {}).get("router") or "")


@pytest.mark.haproxy
async def test_an_haproxy_mesh_mirrors_through_the_embedded_router(tmp_path: Path) -> None:
    """HAProxy 2.6 cannot mirror: while the mirror route exists the VirtualService is served
    by the embedded router on the same address, then by HAProxy again."""
    async with Stage.open(tmp_path, router="haproxy") as stage:
        address, canary_hash = await _mirroring_v2(stage)
        assert _vs_router(stage) == "embedded"
        assert await request_versions(address, 20) == {"v1": 20}
        await _counted(stage, {f"{canary_hash} 200": 10})
        rollouts.promote(stage.cluster, "default", "web")
        await _v2_paused_at(stage, 4)
        await stage.until(lambda: _mirror_realized(stage, False), 30, "the mirror removed")
        await stage.until(lambda: _vs_router(stage) == "haproxy", 30, "HAProxy back")
        assert stage.vs_address() == address
        assert await request_versions(address, 10) == {"v1": 10}
