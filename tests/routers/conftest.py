"""Fixtures for router tests: real backends, and each router kind started on loopback."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conftest import require_program
from headway.clock import VirtualClock
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.protocol import Destination, TrafficRouter
from routers.backends import Backend

RouterFactory = Callable[[], Awaitable[TrafficRouter]]


@pytest.fixture
def backends(clock: VirtualClock) -> Iterator[Callable[[str, str], Backend]]:
    started: list[Backend] = []

    def start(name: str, pod_hash: str) -> Backend:
        backend = Backend(name, pod_hash, clock=clock)
        started.append(backend)
        return backend

    yield start
    for backend in started:
        backend.stop()


def _build(kind: str, clock: VirtualClock, work_dir: Path) -> TrafficRouter:
    if kind == "haproxy":
        from headway.routers.dataplane.haproxy.router import HAProxyRouter

        return HAProxyRouter(work_dir=work_dir, binary=require_program("haproxy"))
    return EmbeddedRouter(clock=clock)


@pytest.fixture(params=["embedded", pytest.param("haproxy", marks=pytest.mark.haproxy)])
async def make_router(
    request: pytest.FixtureRequest, clock: VirtualClock, tmp_path: Path
) -> AsyncIterator[RouterFactory]:
    routers: list[TrafficRouter] = []

    async def make() -> TrafficRouter:
        router = _build(request.param, clock, tmp_path / f"router{len(routers)}")
        await router.start()
        routers.append(router)
        return router

    yield make
    for router in routers:
        pid = getattr(router, "pid", None)
        await router.close()
        if pid is not None:  # HAProxy: the child must be gone, not left behind or a zombie
            status = Path(f"/proc/{pid}/status")
            assert not status.exists() or "State:\tZ" in status.read_text()


def base_url(router: TrafficRouter) -> str:
    host, port = router.address
    return f"http://{host}:{port}"


async def send(
    client: httpx2.AsyncClient, router: TrafficRouter, count: int, **kwargs: Any
) -> Counter[str]:
    """Send `count` sequential GETs; tally answers by "backend-name" or by status code."""
    tally: Counter[str] = Counter()
    for _ in range(count):
        response = await client.get(base_url(router) + "/", **kwargs)
        if response.status_code == 200:
            tally[response.json()["backend"]] += 1
        else:
            tally[str(response.status_code)] += 1
    return tally


def destinations(stable: list[Backend], canary: list[Backend]) -> dict[str, Destination]:
    return {
        "stable": Destination("app-stable", tuple(b.endpoint() for b in stable)),
        "canary": Destination("app-canary", tuple(b.endpoint() for b in canary)),
    }
