"""The cost of reaching a Service by name through the runtime's HTTP proxy, against reaching
the same Service at its local port, measured in the same run.

    .venv/bin/python bench/bench_service_names.py

One Pod (the example app) behind a Service `web` on a real local runtime. Each request is a
new connection (the proxy answers one request per connection), one at a time: directly
`GET /` to the Service's local port, then `GET http://web:80/` to the namespace's proxy.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.model.obj import Obj

APP = Path(__file__).resolve().parents[1] / "examples" / "app" / "server.py"
REQUESTS = 300
ROUNDS = 3


async def _request(port: int, target: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def _latency(port: int, target: str) -> float:
    start = time.perf_counter()
    for _ in range(REQUESTS):
        answer = await _request(port, target)
        if b" 200 " not in answer[:20]:
            raise RuntimeError(f"unexpected answer via {target}: {answer[:80]!r}")
    return (time.perf_counter() - start) / REQUESTS


def _objects() -> list[Obj]:
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "bench/app:v1",
                                         "ports": [{"containerPort": 8080}]}]}}
    svc: Obj = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}
    return [pod, svc]


async def _until_serving(runtime: Runtime) -> int:
    for _ in range(400):
        svc = runtime.cluster.get("v1", "Service", "web", "default")
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if ingress:
            port = int(ingress[0]["ports"][0]["port"])
            try:
                if b" 200 " in (await _request(port, "/"))[:20]:
                    return port
            except OSError:
                pass
        await asyncio.sleep(0.05)
    raise RuntimeError("the Service never answered")


async def main() -> None:
    with tempfile.TemporaryDirectory() as state:
        config = Path(state) / "headway-runtime.yaml"
        command = f"[{sys.executable!r}, {str(APP)!r}]"
        config.write_text(f"images:\n  bench/app:\n    command: {command}\n")
        runtime = Runtime(state_dir=Path(state), clock=SystemClock(), config_path=config,
                          shutdown_grace_seconds=2)
        stop = asyncio.Event()
        task = asyncio.create_task(runtime.run(stop))
        for obj in _objects():
            runtime.cluster.apply(obj, field_manager="bench")
        port = await _until_serving(runtime)
        proxy = runtime.service_names.env_for("default")["HTTP_PROXY"].rsplit(":", 1)[1]
        direct, named = [], []
        for _ in range(ROUNDS):
            direct.append(await _latency(port, "/"))
            named.append(await _latency(int(proxy), "http://web:80/"))
        stop.set()
        await task
    d, n = statistics.median(direct), statistics.median(named)
    print(f"service by name:  Service port {d * 1e3:.2f} ms, via name proxy {n * 1e3:.2f} ms "
          f"-> x{n / d:.2f} (+{(n - d) * 1e3:.2f} ms per request)")


if __name__ == "__main__":
    asyncio.run(main())
