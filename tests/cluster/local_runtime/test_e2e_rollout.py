"""End to end: Deployment rollouts of real processes behind a real Service."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest

from cluster.local_runtime.harness import (
    deployment,
    running_image_tags,
    running_runtime,
    service,
    service_url,
)
from headway.cluster.local.runtime import Runtime
from polling import eventually

pytestmark = pytest.mark.slow


def _rolled_out(runtime: Runtime, name: str, replicas: int) -> bool:
    d = runtime.cluster.get("apps/v1", "Deployment", name, "default")
    status = d.get("status") or {}
    reasons = {c["type"]: c.get("reason") for c in status.get("conditions") or []}
    current = status.get("observedGeneration") == d["metadata"].get("generation")
    return current and (
        status.get("updatedReplicas") == replicas
        and status.get("availableReplicas") == replicas
        and status.get("replicas") == replicas
        and reasons.get("Progressing") == "NewReplicaSetAvailable"
    )


async def _request_loop(url: str, stop: asyncio.Event, results: list[tuple[int, str]]) -> None:
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(3000):  # bounded: at most 3000 requests
            if stop.is_set():
                return
            try:
                response = await client.get(url, headers={"Connection": "close"})
                results.append((response.status_code, response.text.split()[0]))
            except httpx2.HTTPError as err:
                results.append((0, type(err).__name__))
            await asyncio.sleep(0.01)


async def test_rolling_update_serves_every_request(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
        runtime.cluster.apply(
            deployment("web", "headway-demo/app:v1", replicas=2, strategy=strategy),
            field_manager="test",
        )
        runtime.cluster.apply(service("web"), field_manager="test")
        await eventually(lambda: _rolled_out(runtime, "web", 2), what="v1 rolled out")
        url = service_url(runtime, "web") or ""
        stop, results = asyncio.Event(), []
        loop = asyncio.create_task(_request_loop(url, stop, results))
        await eventually(lambda: len(results) >= 20, what="20 requests answered before the update")
        v2 = deployment("web", "headway-demo/app:v2", replicas=2, strategy=strategy)
        v2["spec"]["template"]["spec"]["containers"][0]["env"] = [
            {"name": "READY_AFTER_SECONDS", "value": "1"}
        ]
        runtime.cluster.apply(v2, field_manager="test")
        await eventually(lambda: _rolled_out(runtime, "web", 2), timeout=25, what="v2 rolled out")
        await eventually(
            lambda: len(results) > 50 and results[-1][1] == "v2", what="requests answered by v2"
        )
        stop.set()
        await loop
        failures = [r for r in results if r[0] != 200]
        assert failures == []
        assert "v1" in [v for _, v in results]
        sets = runtime.cluster.list("apps/v1", "ReplicaSet", namespace="default")
        revisions = sorted(
            (
                rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
                rs["spec"]["replicas"],
            )
            for rs in sets
        )
        assert revisions == [("1", 0), ("2", 2)]
        pods = runtime.cluster.list("v1", "Pod", namespace="default")
        hashes = {
            p["metadata"]["labels"]["pod-template-hash"]
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
        }
        assert len(hashes) == 1


async def test_recreate_never_runs_two_versions_at_once(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        strategy = {"type": "Recreate"}
        runtime.cluster.apply(
            deployment("rec", "headway-demo/app:v1", replicas=2, strategy=strategy),
            field_manager="test",
        )
        await eventually(lambda: _rolled_out(runtime, "rec", 2), what="v1 rolled out")
        runtime.cluster.apply(
            deployment("rec", "headway-demo/app:v2", replicas=2, strategy=strategy),
            field_manager="test",
        )
        seen: list[set[str]] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 25
        while loop.time() < deadline and not _rolled_out(runtime, "rec", 2):
            seen.append(set(running_image_tags(runtime.runtime_id)))
            await asyncio.sleep(0.05)
        assert _rolled_out(runtime, "rec", 2)
        assert {"v1"} in seen and {"v2"} in seen  # the check saw both versions, one at a time
        assert all(len(tags) <= 1 for tags in seen)
        assert set(running_image_tags(runtime.runtime_id)) == {"v2"}
