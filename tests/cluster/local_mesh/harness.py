"""A runtime with the local mesh, two versions of the example app, and a VirtualService."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from cluster.local_runtime.harness import deployment, service, write_config
from headway.clock import SystemClock
from headway.cluster.local.mesh.virtual_services import ADDRESS_ANNOTATION, VIRTUAL_SERVICE_API
from headway.cluster.local.runtime import Runtime
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from polling import eventually

STABLE, CANARY = "checkout-stable", "checkout-canary"


@contextlib.asynccontextmanager
async def mesh_runtime(
    state_dir: Path, *, router: str = "embedded", planes: RouterPlanes | None = None
) -> AsyncIterator[Runtime]:
    config = write_config(state_dir)
    config.write_text(config.read_text() + f"router: {router}\n")
    runtime = Runtime(
        state_dir=state_dir,
        clock=SystemClock(),
        config_path=config,
        shutdown_grace_seconds=3.0,
        data_planes=planes or RouterPlanes(),
    )
    stop = asyncio.Event()
    task = asyncio.create_task(runtime.run(stop))
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=20)


def virtual_service(stable_weight: int, canary_weight: int) -> Obj:
    return {
        "apiVersion": VIRTUAL_SERVICE_API,
        "kind": "VirtualService",
        "metadata": {"name": "checkout", "namespace": "default"},
        "spec": {
            "hosts": ["checkout"],
            "http": [
                {
                    "name": "primary",
                    "route": [
                        {"destination": {"host": STABLE}, "weight": stable_weight},
                        {"destination": {"host": f"{CANARY}.default.svc.cluster.local"},
                         "weight": canary_weight},
                    ],
                }
            ],
        },
    }


def deploy_two_versions(runtime: Runtime, *, stable_replicas: int = 1) -> None:
    for name, tag, replicas in ((STABLE, "v1", stable_replicas), (CANARY, "v2", 1)):
        runtime.cluster.apply(
            deployment(name, f"headway-demo/app:{tag}", replicas=replicas), field_manager="test"
        )
        runtime.cluster.apply(service(name), field_manager="test")


def get_vs(runtime: Runtime) -> Obj:
    return runtime.cluster.get(VIRTUAL_SERVICE_API, "VirtualService", "checkout", "default")


def mesh_address(runtime: Runtime) -> str:
    return str((get_vs(runtime)["metadata"].get("annotations") or {}).get(ADDRESS_ANNOTATION))


def realized(runtime: Runtime, canary_weight: int, *, stable_pods: int = 1) -> Any:
    """The status once the mesh serves `canary_weight` with every pod ready, else None."""
    status = get_vs(runtime).get("status") or {}
    ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    destinations = {d["service"]: d for d in status.get("destinations") or []}
    if not ready or ready[0].get("status") != "True" or CANARY not in destinations:
        return None
    counts = (len(destinations[STABLE]["endpoints"]), len(destinations[CANARY]["endpoints"]))
    if counts != (stable_pods, 1) or destinations[CANARY]["weight"] != canary_weight:
        return None
    return status


async def wait_realized(runtime: Runtime, canary_weight: int, *, stable_pods: int = 1) -> Any:
    return await eventually(
        lambda: realized(runtime, canary_weight, stable_pods=stable_pods),
        timeout=20,
        what=f"the mesh to serve canary weight {canary_weight}",
    )


async def versions(address: str, count: int, headers: dict[str, str] | None = None) -> Counter[str]:
    """Send `count` requests through the mesh; how many each version answered."""
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(base_url=f"http://{address}", timeout=5) as client:
        for _ in range(count):
            response = await client.get("/", headers=headers or {})
            seen[f"{response.status_code} {response.text.split()[0]}"] += 1
    return seen


def pod_hash(runtime: Runtime, deployment_name: str) -> str:
    pods = runtime.cluster.list("v1", "Pod", namespace="default",
                                label_selector={"app": deployment_name})
    return str(pods[0]["metadata"]["labels"]["pod-template-hash"])
