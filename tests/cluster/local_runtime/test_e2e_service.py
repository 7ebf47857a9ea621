"""End to end: real processes behind a real Service port."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from cluster.local_runtime.harness import (
    deployment,
    get_text,
    running_runtime,
    service,
    service_url,
)
from headway.cluster.local.kubelet.network import free_port
from headway.kube.pod_facts import is_ready
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow


async def test_deployment_pods_answer_through_the_service(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        cluster.apply(deployment("web", "headway-demo/app:v1"), field_manager="test")
        cluster.apply(service("web"), field_manager="test")

        def ready_pods() -> list[str]:
            pods = cluster.list("v1", "Pod", namespace="default", label_selector={"app": "web"})
            return [p["metadata"]["name"] for p in pods if is_ready(p)]

        names = await eventually(
            lambda: len(ready_pods()) == 2 and ready_pods(), what="2 ready pods"
        )
        url = await eventually(lambda: service_url(runtime, "web"), what="service address")
        seen = set()
        for _ in range(6):
            code, text = await get_text(url)
            assert code == 200
            version, pod = text.split()
            assert version == "v1"
            seen.add(pod)
        assert seen == set(names)  # round-robin reached both pods
        endpoints = cluster.get("v1", "Endpoints", "web", "default")
        assert len(endpoints["subsets"]) == 2
        d = await eventually(
            lambda: (
                (x := cluster.get("apps/v1", "Deployment", "web", "default"))
                .get("status", {})
                .get("availableReplicas")
                == 2
                and x
            ),
            what="status",
        )
        assert d["status"]["updatedReplicas"] == 2
        reasons = {c["type"]: c["reason"] for c in d["status"]["conditions"]}
        assert reasons["Available"] == "MinimumReplicasAvailable"


async def test_a_node_port_fixes_the_address(tmp_path: Path) -> None:
    port = free_port()
    async with running_runtime(tmp_path) as runtime:
        svc = service("pinned")
        svc["spec"]["ports"][0]["nodePort"] = port
        runtime.cluster.apply(
            deployment("pinned", "headway-demo/app:v3", replicas=1), field_manager="test"
        )
        runtime.cluster.apply(svc, field_manager="test")
        url = f"http://127.0.0.1:{port}/"
        assert await eventually(
            lambda: service_url(runtime, "pinned") == url and url, what="address"
        )
        code, text = await eventually_answer(url)
        assert (code, text.split()[0]) == (200, "v3")


async def eventually_answer(url: str) -> tuple[int, str]:
    async def answered() -> tuple[int, str] | None:
        try:
            code, text = await get_text(url)
        except httpx2.HTTPError:
            return None
        return (code, text) if code == 200 else None

    answer: tuple[int, str] = await eventually_async(answered, what=f"{url} to answer 200")
    return answer
