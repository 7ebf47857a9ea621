"""The local mesh's costs, each against a baseline measured in the same run.

    .venv/bin/python bench/bench_local_mesh.py

1. Weight propagation: from the Rollout controller's edit of the VirtualService in the store
   (`IstioReconciler.set_weight`, 0 <-> 100) to the first request answered by the new side,
   through the runtime daemon's loop — against calling `set_weight` on an embedded router
   directly (the same endpoints) and sending the same request.
2. Mesh step: the time `Mesh.sync()` takes per runtime step with VIRTUAL_SERVICES
   VirtualServices and nothing changing, against the rest of the same runtime step
   (controllers, Service proxies, kubelet).
3. Requests: latency through a VirtualService's router vs the Service's own TCP proxy, one
   keep-alive client, the same pods.
4. Gateway: latency through an Istio Gateway's listener (Host routing, then the same router)
   vs through the VirtualService's router directly.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2

from headway.clock import SystemClock
from headway.cluster.local.mesh.virtual_services import VIRTUAL_SERVICE_API
from headway.cluster.local.runtime import Runtime
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.routers.control.istio import IstioReconciler
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.protocol import Destination, Endpoint

APP = Path(__file__).resolve().parents[1] / "examples" / "app" / "server.py"
FLIPS = 20
VIRTUAL_SERVICES = 20
REQUESTS = 400


def _deployment(name: str, tag: str) -> Obj:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app",
                                                       "image": f"bench/app:{tag}"}]}}},
    }


def _service(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}


def _virtual_service(name: str) -> Obj:
    route = [{"destination": {"host": "stable"}, "weight": 100},
             {"destination": {"host": "canary"}, "weight": 0}]
    return {"apiVersion": VIRTUAL_SERVICE_API, "kind": "VirtualService",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"hosts": [f"{name}.bench.example"], "gateways": ["edge"],
                     "http": [{"name": "primary", "route": route}]}}


GATEWAY: Obj = {
    "apiVersion": "networking.istio.io/v1beta1", "kind": "Gateway",
    "metadata": {"name": "edge", "namespace": "default"},
    "spec": {"servers": [{"port": {"number": 80, "protocol": "HTTP"}, "hosts": ["*"]}]},
}


async def _until(check: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.05)
    raise SystemExit("bench: timed out waiting for the runtime")


async def _answers(client: httpx2.AsyncClient, url: str, version: str) -> bool:
    try:
        return (await client.get(url)).text.startswith(version)
    except httpx2.HTTPError:
        return False


async def _flip_time(client: httpx2.AsyncClient, url: str, flip: Callable[[int], object],
                     weight: int) -> float:
    version = "v2" if weight == 100 else "v1"
    start = time.perf_counter()
    result = flip(weight)
    if asyncio.iscoroutine(result):
        await result
    while not await _answers(client, url, version):
        pass
    return time.perf_counter() - start


def _endpoints(runtime: Runtime, app: str) -> Destination:
    pod = runtime.cluster.list("v1", "Pod", label_selector={"app": app})[0]
    port = int(pod["metadata"]["annotations"]["headway.dev/port"])
    return Destination(app, (Endpoint("127.0.0.1", port, "h"),))


async def _propagation(runtime: Runtime, client: httpx2.AsyncClient, url: str) -> None:
    istio = IstioReconciler(runtime.cluster, namespace="default",
                            virtual_services=[{"name": "vs-0"}],
                            stable_service="stable", canary_service="canary")
    mesh_times = [await _flip_time(client, url, istio.set_weight, 100 * (i % 2 == 0))
                  for i in range(FLIPS)]
    router = EmbeddedRouter()
    await router.start()
    await router.update_destinations(stable=_endpoints(runtime, "stable"),
                                     canary=_endpoints(runtime, "canary"))
    direct_url = f"http://127.0.0.1:{router.address[1]}/"
    direct = [await _flip_time(client, direct_url, router.set_weight, 100 * (i % 2 == 0))
              for i in range(FLIPS)]
    await router.close()
    m, d = statistics.median(mesh_times), statistics.median(direct)
    print(f"weight change -> first request on the new side (median of {FLIPS}):")
    print(f"  through the store and the daemon loop {m * 1000:8.1f} ms")
    print(f"  set_weight on the router directly     {d * 1000:8.1f} ms   ratio {m / d:6.1f}x")


async def _latency(
    client: httpx2.AsyncClient, url: str, headers: dict[str, str] | None = None
) -> float:
    start = time.perf_counter()
    for _ in range(REQUESTS):
        await client.get(url, headers=headers)
    return (time.perf_counter() - start) / REQUESTS


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        config = state / "headway-runtime.yaml"
        config.write_text(f"images:\n  bench/app:\n    command: [{sys.executable!r}, "
                          f"{str(APP)!r}]\n    versionFromTag: true\n")
        runtime = Runtime(state_dir=state, clock=SystemClock(), config_path=config,
                          data_planes=RouterPlanes(), shutdown_grace_seconds=3)
        assert runtime.mesh is not None
        mesh, timings = runtime.mesh, {"mesh": [0.0], "step": [0.0]}
        original_sync, original_step = mesh.sync, runtime.step

        async def timed_sync() -> None:
            start = time.perf_counter()
            await original_sync()
            timings["mesh"].append(time.perf_counter() - start)

        async def timed_step() -> float | None:
            start = time.perf_counter()
            result = await original_step()
            timings["step"].append(time.perf_counter() - start)
            return result

        mesh.sync, runtime.step = timed_sync, timed_step  # type: ignore[method-assign]
        stop = asyncio.Event()
        task = asyncio.create_task(runtime.run(stop))
        for name, tag in (("stable", "v1"), ("canary", "v2")):
            runtime.cluster.apply(_deployment(name, tag), field_manager="bench")
            runtime.cluster.apply(_service(name), field_manager="bench")
        for index in range(VIRTUAL_SERVICES):
            runtime.cluster.apply(_virtual_service(f"vs-{index}"), field_manager="bench")
        runtime.cluster.apply(GATEWAY, field_manager="bench")

        def address() -> str:
            vs = runtime.cluster.get(VIRTUAL_SERVICE_API, "VirtualService", "vs-0", "default")
            return str((vs["metadata"].get("annotations") or {}).get("headway.dev/address"))

        async with httpx2.AsyncClient(timeout=5) as client:
            await _until(lambda: _answers(client, f"http://{address()}/", "v1"))
            url = f"http://{address()}/"
            svc = runtime.cluster.get("v1", "Service", "stable", "default")
            svc_port = svc["status"]["loadBalancer"]["ingress"][0]["ports"][0]["port"]
            svc_url = f"http://127.0.0.1:{svc_port}/"
            await _propagation(runtime, client, url)
            timings["mesh"].clear()
            timings["step"].clear()
            await asyncio.sleep(3)  # idle: the loop steps every 0.5 s with nothing changing
            mesh_ms = statistics.median(timings["mesh"]) * 1000
            rest_ms = statistics.median(timings["step"]) * 1000 - mesh_ms
            print(f"runtime step with {VIRTUAL_SERVICES} VirtualServices, nothing changing "
                  f"(median of {len(timings['mesh'])}):")
            print(f"  mesh sync          {mesh_ms:8.2f} ms")
            print(f"  rest of the step   {rest_ms:8.2f} ms   ratio {mesh_ms / rest_ms:6.2f}x")
            mesh_latency = await _latency(client, url)
            service_latency = await _latency(client, svc_url)
            print(f"request latency, one keep-alive client (mean of {REQUESTS}):")
            print(f"  through the VirtualService router {mesh_latency * 1e6:8.0f} us")
            print(f"  through the Service's TCP proxy   {service_latency * 1e6:8.0f} us   "
                  f"ratio {mesh_latency / service_latency:5.2f}x")
            gateway = runtime.cluster.get("networking.istio.io/v1", "Gateway", "edge", "default")
            gateway_url = f"http://{gateway['status']['address']}/"
            host = {"host": "vs-0.bench.example"}
            through_gateway = await _latency(client, gateway_url, host)
            direct = await _latency(client, url, host)
            print(f"request latency through a Gateway, one keep-alive client (mean of {REQUESTS}):")
            print(f"  Gateway listener, then the router {through_gateway * 1e6:8.0f} us")
            print(f"  the router directly               {direct * 1e6:8.0f} us   "
                  f"ratio {through_gateway / direct:5.2f}x")
        stop.set()
        await task


if __name__ == "__main__":
    asyncio.run(main())
