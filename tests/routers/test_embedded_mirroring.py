"""The embedded router's mirror routes: copies of matching requests to the canary, fire and
forget, counted; the client is always answered by the split and never waits for a copy."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest

from headway.clock import VirtualClock
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.protocol import (
    Destination,
    Endpoint,
    HeaderMatch,
    MatchKind,
    MirrorRoute,
    RequestMatch,
    RouterError,
)
from polling import eventually, eventually_async
from routers.backends import Backend
from routers.conftest import base_url, destinations

MakeBackend = Callable[[str, str], Backend]
POST_COLOR = RequestMatch(
    (HeaderMatch(":method", "POST"), HeaderMatch(":path", "/color", MatchKind.PREFIX))
)


@pytest.fixture
async def router(clock: VirtualClock) -> AsyncIterator[EmbeddedRouter]:
    router = EmbeddedRouter(clock=clock)
    await router.start()
    yield router
    await router.close()


async def _requests(router: EmbeddedRouter, method: str, path: str, count: int) -> Counter[str]:
    """`count` requests; who answered (backend name, or the status code)."""
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=10) as client:
        for _ in range(count):
            answer = await client.request(method, base_url(router) + path, headers={"host": "web"})
            seen[
                answer.json()["backend"] if answer.status_code == 200 else str(answer.status_code)
            ] += 1
    return seen


async def test_the_matching_share_is_copied_to_the_canary_and_stable_answers(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(0)
    await router.set_mirror_route(MirrorRoute("shadow", (POST_COLOR,), 50))
    assert await _requests(router, "POST", "/color/blue?x=1", 40) == Counter({"stable-1": 40})
    assert await _requests(router, "GET", "/color", 10) == Counter({"stable-1": 10})
    assert await _requests(router, "POST", "/size", 10) == Counter({"stable-1": 10})
    assert router.mirrors_sent == 20  # exactly 40 x 50 %, and none of the 20 unmatched
    await eventually(lambda: canary.state.requests == 20, what="20 copies at the canary")
    assert canary.state.last_headers["host"] == "web-shadow"  # as Envoy marks a copy
    snapshot = await router.metrics_snapshot()
    assert snapshot.requests(route="shadow", pod_template_hash="bbb222", code_prefix="2") == 20
    assert snapshot.requests(route="", pod_template_hash="aaa111") == 60

    await router.set_mirror_route(MirrorRoute("shadow"))  # no matches: removed
    assert await _requests(router, "POST", "/color", 20) == Counter({"stable-1": 20})
    assert router.mirrors_sent == 20
    assert canary.state.requests == 20


async def test_the_percentage_is_an_exact_share(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_mirror_route(MirrorRoute("all", (RequestMatch(),), 30))
    await _requests(router, "GET", "/", 10)
    assert router.mirrors_sent == 3
    await router.remove_managed_routes()
    await _requests(router, "GET", "/", 10)
    assert router.mirrors_sent == 3


async def test_a_canary_that_is_down_costs_the_client_nothing(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable, gone = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    gone.stop()  # the canary's port refuses connections
    await router.update_destinations(**destinations([stable], [gone]))
    await router.set_mirror_route(MirrorRoute("shadow", (RequestMatch(),)))
    assert await _requests(router, "GET", "/", 10) == Counter({"stable-1": 10})

    async def all_refused() -> bool:
        snapshot = await router.metrics_snapshot()
        return snapshot.requests(route="shadow", code_prefix="502") == 10

    assert router.mirrors_sent == 10
    await eventually_async(all_refused, what="10 copies counted as refused (502)")


async def test_a_canary_that_never_answers_never_delays_the_client(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    """The canary accepts and reads the copies but never answers: every client request is
    answered while all five copies are still held open, so none waited for its copy."""
    held: list[asyncio.StreamWriter] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        held.append(writer)

    silent = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    stable = backends("stable-1", "aaa111")
    canary = Destination("app-canary", (Endpoint("127.0.0.1", port, "bbb222"),))
    await router.update_destinations(stable=destinations([stable], [])["stable"], canary=canary)
    await router.set_mirror_route(MirrorRoute("shadow", (RequestMatch(),)))
    assert await _requests(router, "GET", "/", 5) == Counter({"stable-1": 5})
    await eventually(lambda: len(held) == 5, what="five copies held by the silent canary")
    assert (await router.metrics_snapshot()).requests(route="shadow") == 0  # none answered
    await router.close()  # pending copies are cancelled, not left running
    for writer in held:
        writer.close()
    silent.close()
    await silent.wait_closed()


def test_request_matches_read_the_request_line_as_envoy_does() -> None:
    fields = {":method": "GET", ":path": "/api/v1?debug=1", "x-user": "qa-7"}
    exact_path = RequestMatch((HeaderMatch(":path", "/api/v1"),))
    prefix_with_query = RequestMatch((HeaderMatch(":path", "/api/v1?debug", MatchKind.PREFIX),))
    both = RequestMatch(
        (HeaderMatch(":method", "GET"), HeaderMatch("x-user", "qa-", MatchKind.PREFIX))
    )
    wrong_method = RequestMatch((HeaderMatch(":method", "POST"), HeaderMatch("x-user", "qa-7")))
    assert exact_path.matches(fields.get)  # exact and regex paths ignore the query string
    assert prefix_with_query.matches(fields.get)  # a prefix sees it
    assert both.matches(fields.get) and not wrong_method.matches(fields.get)  # all must hold
    assert RequestMatch().matches(fields.get)


def test_a_percentage_outside_0_to_100_is_refused() -> None:
    with pytest.raises(RouterError, match=r"percentage must be within 0\.\.100"):
        MirrorRoute("shadow", (RequestMatch(),), 150)


async def test_a_copy_is_counted_when_its_answer_is_complete(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    """A canary that answers but keeps the connection open (ignoring `Connection: close`):
    the copy is counted by its status once the body is read, not after the upstream timeout."""
    lingering: list[asyncio.StreamWriter] = []

    async def answer_and_linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        lingering.append(writer)

    canary_server = await asyncio.start_server(answer_and_linger, "127.0.0.1", 0)
    port = canary_server.sockets[0].getsockname()[1]
    stable = backends("stable-1", "aaa111")
    canary = Destination("app-canary", (Endpoint("127.0.0.1", port, "bbb222"),))
    await router.update_destinations(stable=destinations([stable], [])["stable"], canary=canary)
    await router.set_mirror_route(MirrorRoute("shadow", (RequestMatch(),)))
    assert await _requests(router, "GET", "/", 3) == Counter({"stable-1": 3})

    async def counted() -> bool:
        snapshot = await router.metrics_snapshot()
        return snapshot.requests(route="shadow", code_prefix="201") == 3

    await eventually_async(counted, what="3 copies counted as 201 while their connections stay")
    for writer in lingering:
        writer.close()
    canary_server.close()
    await canary_server.wait_closed()
