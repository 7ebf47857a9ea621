"""Router throughput and added latency against a direct connection to the same backend.

    .venv/bin/python bench/bench_router.py

One run measures three paths to one backend process, all on loopback with keep-alive:
direct, through the embedded proxy (in its own process), and through HAProxy (when
installed). Throughput uses 8 concurrent connections; latency is one connection, one request
at a time. It also times the metrics recording the embedded proxy does per request. Numbers
are printed as ratios to the direct baseline measured in the same run.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.haproxy.router import HAProxyRouter
from headway.routers.dataplane.metrics import RequestMetrics, render_prometheus
from headway.routers.dataplane.protocol import Destination, Endpoint

ROUNDS = 3
THROUGHPUT_REQUESTS = 6000
THROUGHPUT_CONNECTIONS = 8
LATENCY_REQUESTS = 1500
REQUEST = b"GET /bench HTTP/1.1\r\nhost: bench\r\n\r\n"
BODY = b'{"ok": true}'


# -- child processes: a minimal keep-alive backend, and the embedded proxy -----------------


async def _backend_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY)
    try:
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(answer)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve_backend() -> None:
    server = await asyncio.start_server(_backend_connection, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


async def _serve_embedded(backend_port: int) -> None:
    router = EmbeddedRouter()
    await router.start()
    endpoint = Endpoint("127.0.0.1", backend_port, "bench")
    await router.update_destinations(
        stable=Destination("bench", (endpoint,)), canary=Destination("bench-canary")
    )
    print(router.address[1], flush=True)
    await asyncio.Event().wait()


def _start_child(*args: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def _stop_child(child: subprocess.Popen[str]) -> None:
    child.terminate()
    child.wait(timeout=5)


# -- load ----------------------------------------------------------------------------------


async def _one_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(REQUEST)
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"unexpected answer {head[:40]!r}")


async def _connection_loop(port: int, count: int, latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(count):
        started = time.perf_counter()
        await _one_request(reader, writer)
        latencies.append(time.perf_counter() - started)
    writer.close()


async def measure(port: int) -> dict[str, float]:
    await _connection_loop(port, 100, [])  # warm up connections and caches
    started = time.perf_counter()
    per_connection = THROUGHPUT_REQUESTS // THROUGHPUT_CONNECTIONS
    await asyncio.gather(
        *(_connection_loop(port, per_connection, []) for _ in range(THROUGHPUT_CONNECTIONS))
    )
    throughput = THROUGHPUT_REQUESTS / (time.perf_counter() - started)
    latencies: list[float] = []
    await _connection_loop(port, LATENCY_REQUESTS, latencies)
    cuts = statistics.quantiles(latencies, n=100)
    return {"rps": throughput, "p50_ms": cuts[49] * 1000, "p99_ms": cuts[98] * 1000}


def metrics_overhead_us() -> tuple[float, float]:
    """Microseconds per `observe()` and per /metrics render of 50 series."""
    metrics = RequestMetrics()
    rounds = 100_000
    started = time.perf_counter()
    for i in range(rounds):
        metrics.observe(
            service="app", pod_template_hash=f"h{i % 50}", route="", code="200", seconds=0.003
        )
    observe = (time.perf_counter() - started) / rounds * 1e6
    snapshot = metrics.snapshot()
    started = time.perf_counter()
    for _ in range(100):
        render_prometheus(snapshot)
    return observe, (time.perf_counter() - started) / 100 * 1e6


async def _measure_rounds(ports: dict[str, int]) -> dict[str, dict[str, float]]:
    """Interleaved rounds, median per path, so drifting load on the machine hits all alike."""
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in ports}
    for _ in range(ROUNDS):
        for name, port in ports.items():
            rounds[name].append(await measure(port))
    return {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in rounds.items()
    }


async def run_all(backend_port: int) -> dict[str, dict[str, float]]:
    child, embedded_port = _start_child("--serve-embedded", str(backend_port))
    ports = {"direct": backend_port, "embedded": embedded_port}
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    router = None
    try:
        with tempfile.TemporaryDirectory() as work_dir:
            if Path(binary).exists():
                router = HAProxyRouter(work_dir=Path(work_dir), binary=binary)
                await router.start()
                endpoint = Endpoint("127.0.0.1", backend_port, "bench")
                await router.update_destinations(
                    stable=Destination("bench", (endpoint,)), canary=Destination("bench-canary")
                )
                ports["haproxy"] = router.address[1]
            return await _measure_rounds(ports)
    finally:
        if router is not None:
            await router.close()
        _stop_child(child)


def report(results: dict[str, dict[str, float]]) -> None:
    direct = results["direct"]
    print(
        f"{'path':10} {'req/s':>9} {'x direct':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'+p50 ms':>8} {'+p99 ms':>8}"
    )
    for name, r in results.items():
        print(
            f"{name:10} {r['rps']:9.0f} {r['rps'] / direct['rps']:9.2f} {r['p50_ms']:8.3f} "
            f"{r['p99_ms']:8.3f} {r['p50_ms'] - direct['p50_ms']:8.3f} "
            f"{r['p99_ms'] - direct['p99_ms']:8.3f}"
        )
    observe, render = metrics_overhead_us()
    per_request_us = 1e6 / results["embedded"]["rps"]
    print(
        f"metrics: observe() {observe:.2f} us/request "
        f"({observe / per_request_us:.1%} of an embedded request at full load); "
        f"/metrics render of 50 series {render:.0f} us"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-backend":
        asyncio.run(_serve_backend())
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-embedded":
        asyncio.run(_serve_embedded(int(sys.argv[2])))
        return
    backend, backend_port = _start_child("--serve-backend")
    try:
        report(asyncio.run(run_all(backend_port)))
    finally:
        _stop_child(backend)


if __name__ == "__main__":
    main()
