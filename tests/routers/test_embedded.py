"""What only the embedded proxy does: exact latency, body framing, additional destinations."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from headway.clock import VirtualClock
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.protocol import (
    Destination,
    HeaderMatch,
    HeaderRoute,
    RouterError,
    WeightDestination,
)
from routers.backends import Backend
from routers.conftest import base_url, destinations, send

MakeBackend = Callable[[str, str], Backend]


@pytest.fixture
async def router(clock: VirtualClock) -> AsyncIterator[EmbeddedRouter]:
    router = EmbeddedRouter(clock=clock)
    await router.start()
    yield router
    await router.close()


async def raw_exchange(router: EmbeddedRouter, request: bytes) -> bytes:
    """Send raw bytes and read until the proxy closes the connection."""
    reader, writer = await asyncio.open_connection(*router.address)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_latency_lands_in_the_bucket_of_the_time_taken(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    canary.state.virtual_delay = 0.3  # the backend moves the router's virtual clock
    stable.state.virtual_delay = 0.004
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(50)
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 20) == Counter({"stable-1": 10, "canary-1": 10})
        host, port = router.metrics_address
        text = (await client.get(f"http://{host}:{port}/metrics")).text
    samples = {
        (s.name, s.labels["rollouts_pod_template_hash"], s.labels.get("le")): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if family.name == "headway_request_duration_seconds"
    }
    bucket = "headway_request_duration_seconds_bucket"
    assert samples[bucket, "bbb222", "0.25"] == 0
    assert samples[bucket, "bbb222", "0.5"] == 10
    assert samples[bucket, "aaa111", "0.005"] == 10
    assert samples["headway_request_duration_seconds_sum", "bbb222", None] == pytest.approx(3.0)


async def test_bodies_and_forwarding_headers_pass_through(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    stable.state.chunked_response = True
    await router.update_destinations(**destinations([stable], []))

    async def chunks() -> AsyncIterator[bytes]:
        for piece in (b"hello ", b"chunked ", b"world"):
            yield piece

    async with httpx2.AsyncClient() as client:
        url = base_url(router) + "/upload?x=1"
        chunked = await client.post(url, content=chunks(), headers={"x-forwarded-for": "10.0.0.9"})
        sized = await client.put(url, content=b"sized body")
    assert chunked.json()["body"] == "hello chunked world"
    assert chunked.json()["path"] == "/upload?x=1"
    assert sized.json()["body"] == "sized body"
    assert stable.state.last_headers["x-forwarded-for"] == "127.0.0.1"
    assert sized.headers.get("transfer-encoding") == "chunked"


async def test_large_bodies_cross_in_full_both_ways(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    await router.update_destinations(**destinations([stable], []))
    big = "".join(chr(ord("a") + i % 26) for i in range(300_000))
    async with httpx2.AsyncClient() as client:
        response = await client.post(base_url(router), content=big.encode())
        follow_up = await client.get(base_url(router))  # the connection is still in step
    assert response.json()["body"] == big
    assert follow_up.json()["body"] == ""


async def test_x_forwarded_for_is_appended_to(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    await router.update_destinations(**destinations([stable], []))
    async with httpx2.AsyncClient() as client:
        await client.get(base_url(router), headers={"x-forwarded-for": "10.0.0.9"})
    assert stable.state.last_headers["x-forwarded-for"] == "10.0.0.9, 127.0.0.1"


async def test_backend_closing_idle_connections_costs_no_request(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    stable.state.drop_keep_alive = True
    await router.update_destinations(**destinations([stable], []))
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 20) == Counter({"stable-1": 20})
    assert stable.state.requests == 20


async def test_additional_destinations_get_exact_shares(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    pods = {name: backends(name, f"hash-{name}") for name in ("stable", "canary", "preview")}
    await router.update_destinations(
        stable=Destination("app-stable", (pods["stable"].endpoint(),)),
        canary=Destination("app-canary", (pods["canary"].endpoint(),)),
        additional=[Destination("app-preview", (pods["preview"].endpoint(),))],
    )
    extra = [WeightDestination("app-preview", 15, "hash-preview")]
    await router.set_weight(5, extra)
    assert await router.verify_weight(5, extra) is True
    assert await router.verify_weight(5) is False
    async with httpx2.AsyncClient() as client:
        tally = await send(client, router, 200)
    assert tally == Counter({"stable": 160, "canary": 10, "preview": 30})
    with pytest.raises(RouterError, match="never given endpoints"):
        await router.set_weight(5, [WeightDestination("app-other", 5)])
    with pytest.raises(RouterError, match="add up to 110"):
        await router.set_weight(60, [WeightDestination("app-preview", 50)])


async def test_header_routed_requests_carry_the_route_label(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_header_route(HeaderRoute("qa", (HeaderMatch("x-canary", "always"),)))
    async with httpx2.AsyncClient() as client:
        await send(client, router, 3, headers={"x-canary": "always"})
        await send(client, router, 2)
    snapshot = await router.metrics_snapshot()
    routes = {(s.pod_template_hash, s.route): s.count for s in snapshot.series}
    assert routes == {("bbb222", "qa"): 3, ("aaa111", ""): 2}


async def test_ambiguous_request_framing_is_refused(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    await router.update_destinations(**destinations([stable], []))
    answer = await raw_exchange(
        router,
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n"
        b"transfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 400 ")
    unsupported = await raw_exchange(
        router, b"POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n"
    )
    assert unsupported.startswith(b"HTTP/1.1 501 Not Implemented")
    assert stable.state.requests == 0


async def test_http_1_0_client_gets_its_answer_and_a_close(
    router: EmbeddedRouter, backends: MakeBackend
) -> None:
    stable = backends("stable-1", "aaa111")
    await router.update_destinations(**destinations([stable], []))
    answer = await raw_exchange(router, b"GET /old HTTP/1.0\r\nhost: x\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"connection: close" in head.lower()
    assert json.loads(body)["path"] == "/old"


async def test_metrics_server_answers_only_metrics(router: EmbeddedRouter) -> None:
    host, port = router.metrics_address
    async with httpx2.AsyncClient() as client:
        assert (await client.get(f"http://{host}:{port}/other")).status_code == 404
        metrics = await client.get(f"http://{host}:{port}/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")


async def test_closed_router_listens_no_more(clock: VirtualClock) -> None:
    router = EmbeddedRouter(clock=clock)
    await router.start()
    address = router.address
    await router.close()
    with pytest.raises(OSError):
        await asyncio.open_connection(*address)


async def test_duplicate_destination_services_are_refused(router: EmbeddedRouter) -> None:
    with pytest.raises(RouterError, match="distinct"):
        await router.update_destinations(stable=Destination("app"), canary=Destination("app"))
