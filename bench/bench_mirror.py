"""What a mirror route costs the client on the embedded router.

    .venv/bin/python bench/bench_mirror.py

The embedded proxy runs in its own process in front of one stable backend (the minimal
keep-alive backend of bench_router.py) with a mirror route copying every request (100 %) to a
canary that is (a) absent (no mirror route: the baseline), (b) a fast backend, (c) a port
that refuses connections, (d) a server that reads each copy and never answers. Throughput
uses 8 concurrent connections, latency one connection; rounds are interleaved and the median
is printed, as ratios to the baseline. (d) is the promise "a canary that hangs never delays
the client" in numbers: the copies pile up to the in-flight bound (64) and are then skipped.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys

from bench_router import _start_child, _stop_child, measure
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.protocol import Destination, Endpoint, MirrorRoute, RequestMatch

ROUNDS = 3
CANARIES = ("none", "fast", "refusing", "hanging")


async def _hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read()  # read the copy, never answer; the proxy gives up after its timeout


def _refusing_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again: connecting to it is refused


async def _serve_mirroring(stable_port: int, canary: str, fast_port: int) -> None:
    router = EmbeddedRouter(upstream_timeout=5.0)
    await router.start()
    hanging = await asyncio.start_server(_hold, "127.0.0.1", 0)
    canary_port = {
        "fast": fast_port,
        "refusing": _refusing_port(),
        "hanging": int(hanging.sockets[0].getsockname()[1]),
    }.get(canary, 0)
    endpoints = (Endpoint("127.0.0.1", canary_port, "canary"),) if canary_port else ()
    await router.update_destinations(
        stable=Destination("bench", (Endpoint("127.0.0.1", stable_port, "stable"),)),
        canary=Destination("bench-canary", endpoints),
    )
    if canary != "none":
        await router.set_mirror_route(MirrorRoute("shadow", (RequestMatch(),), 100))
    print(router.address[1], flush=True)
    await asyncio.Event().wait()


async def _rounds(ports: dict[str, int]) -> dict[str, dict[str, float]]:
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in ports}
    for _ in range(ROUNDS):
        for name, port in ports.items():
            runs[name].append(await measure(port))
    return {
        name: {key: statistics.median(r[key] for r in found) for key in found[0]}
        for name, found in runs.items()
    }


def _report(results: dict[str, dict[str, float]]) -> None:
    base = results["none"]
    print(f"{'canary':10} {'req/s':>9} {'x none':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for name, r in results.items():
        print(
            f"{name:10} {r['rps']:9.0f} {r['rps'] / base['rps']:8.2f} "
            f"{r['p50_ms']:8.3f} {r['p99_ms']:8.3f}"
        )


def _start_proxy(*args: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve-mirroring", *args], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--serve-mirroring":
        asyncio.run(_serve_mirroring(int(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
        return
    stable, stable_port = _start_child("--serve-backend")
    fast, fast_port = _start_child("--serve-backend")
    proxies = {name: _start_proxy(str(stable_port), name, str(fast_port)) for name in CANARIES}
    try:
        _report(asyncio.run(_rounds({name: port for name, (_, port) in proxies.items()})))
    finally:
        for child in (stable, fast, *(child for child, _ in proxies.values())):
            _stop_child(child)


if __name__ == "__main__":
    main()
