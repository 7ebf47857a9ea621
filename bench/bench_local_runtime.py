"""The local runtime's costs, each against a baseline measured in the same run.

    .venv/bin/python bench/bench_local_runtime.py

1. Service proxy: the example app answering directly vs through a Service's TCP proxy
   (a new connection per request, as the app closes each one): latency one request at a
   time, and throughput with 8 concurrent clients.
2. Pod start: from applying a Pod (no readiness probe) to its process answering HTTP, vs
   starting the same command by hand and waiting for it to answer.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headway.clock import SystemClock
from headway.cluster.local.kubelet.network import free_port
from headway.cluster.local.runtime import Runtime
from headway.cluster.local.services.proxies import Backend, TcpProxy

APP = Path(__file__).resolve().parents[1] / "examples" / "app" / "server.py"
LATENCY_REQUESTS = 400
THROUGHPUT_REQUESTS = 1200
CONCURRENCY = 8
ROUNDS = 3


async def _request(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
    await writer.drain()
    await reader.read()
    writer.close()


async def _latency(port: int) -> float:
    start = time.perf_counter()
    for _ in range(LATENCY_REQUESTS):
        await _request(port)
    return (time.perf_counter() - start) / LATENCY_REQUESTS


async def _throughput(port: int) -> float:
    per_client = THROUGHPUT_REQUESTS // CONCURRENCY

    async def client() -> None:
        for _ in range(per_client):
            await _request(port)

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(CONCURRENCY)))
    return per_client * CONCURRENCY / (time.perf_counter() - start)


async def _wait_answering(port: int, deadline: float = 10.0) -> None:
    end = time.perf_counter() + deadline
    while time.perf_counter() < end:
        try:
            await _request(port)
            return
        except OSError:
            await asyncio.sleep(0.005)
    raise RuntimeError(f"nothing answered on {port}")


async def bench_proxy() -> None:
    app_port, proxy_port = free_port(), free_port()
    env = {**os.environ, "PORT": str(app_port), "VERSION": "bench"}
    app = subprocess.Popen(
        [sys.executable, str(APP)], env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    proxy = TcpProxy(proxy_port)
    try:
        await _wait_answering(app_port)
        await proxy.start()
        proxy.set_backends((Backend("127.0.0.1", app_port, "bench"),))
        direct_lat, proxied_lat, direct_tp, proxied_tp = [], [], [], []
        for _ in range(ROUNDS):
            direct_lat.append(await _latency(app_port))
            proxied_lat.append(await _latency(proxy_port))
            direct_tp.append(await _throughput(app_port))
            proxied_tp.append(await _throughput(proxy_port))
    finally:
        await proxy.close()
        app.terminate()
        app.wait()
    dl, pl = statistics.median(direct_lat), statistics.median(proxied_lat)
    dt, pt = statistics.median(direct_tp), statistics.median(proxied_tp)
    print(
        f"proxy latency:    direct {dl * 1e3:.2f} ms, via Service {pl * 1e3:.2f} ms "
        f"-> x{pl / dl:.2f} (+{(pl - dl) * 1e3:.2f} ms)"
    )
    print(f"proxy throughput: direct {dt:.0f} req/s, via Service {pt:.0f} req/s -> x{pt / dt:.2f}")


async def _hand_start() -> float:
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(APP)],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    await _wait_answering(port)
    took = time.perf_counter() - start
    proc.terminate()
    proc.wait()
    return took


async def _runtime_start(runtime: Runtime, index: int) -> float:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{index}", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "bench/app:v1"}]},
    }
    start = time.perf_counter()
    runtime.cluster.apply(pod, field_manager="bench")
    while True:
        annotations = (
            runtime.cluster.get("v1", "Pod", f"bench-{index}", "default")["metadata"].get(
                "annotations"
            )
            or {}
        )
        if "headway.dev/port" in annotations:
            break
        await asyncio.sleep(0.005)
    await _wait_answering(int(annotations["headway.dev/port"]))
    took = time.perf_counter() - start
    runtime.cluster.delete("v1", "Pod", f"bench-{index}", "default")
    return took


async def bench_pod_start() -> None:
    with tempfile.TemporaryDirectory() as state:
        config = Path(state) / "headway-runtime.yaml"
        config.write_text(
            f"images:\n  bench/app:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
        )
        runtime = Runtime(
            state_dir=Path(state), clock=SystemClock(), config_path=config, shutdown_grace_seconds=2
        )
        stop = asyncio.Event()
        task = asyncio.create_task(runtime.run(stop))
        hand = [await _hand_start() for _ in range(ROUNDS * 2)]
        local = [await _runtime_start(runtime, i) for i in range(ROUNDS * 2)]
        stop.set()
        await task
    h, r = statistics.median(hand), statistics.median(local)
    print(f"pod start:        by hand {h * 1e3:.0f} ms, as a Pod {r * 1e3:.0f} ms -> x{r / h:.2f}")


async def main() -> None:
    await bench_proxy()
    await bench_pod_start()


if __name__ == "__main__":
    asyncio.run(main())
