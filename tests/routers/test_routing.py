"""Behaviour both routers share, checked with real HTTP through each of them."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from headway.routers.dataplane.protocol import (
    Destination,
    HeaderMatch,
    HeaderRoute,
    MatchKind,
    RouterError,
    TrafficRouter,
)
from routers.backends import Backend, refused_endpoint
from routers.conftest import RouterFactory, base_url, destinations, send

MakeBackend = Callable[[str, str], Backend]


def code_label(router: TrafficRouter, status: int) -> str:
    """HAProxy counts status classes; the embedded router counts exact codes."""
    return f"{status // 100}xx" if router.type_name == "haproxy" else str(status)


async def test_weight_90_10_splits_1000_requests_exactly(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(10)
    async with httpx2.AsyncClient() as client:
        if router.type_name == "haproxy":
            # HAProxy's scheduler carries its position across a weight change, so the first
            # window of 100 requests may be off by one; every window after it is exact.
            first_window = await send(client, router, 100)
            assert abs(first_window["canary-1"] - 10) <= 1
            assert first_window.total() == 100
            stable.state.requests = canary.state.requests = 0
        tally = await send(client, router, 1000)
    assert tally == Counter({"stable-1": 900, "canary-1": 100})
    assert (stable.state.requests, canary.state.requests) == (900, 100)


async def test_endpoints_of_a_destination_share_its_traffic_round_robin(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    pods = [backends("stable-1", "aaa111"), backends("stable-2", "aaa111")]
    await router.update_destinations(**destinations(pods, []))
    async with httpx2.AsyncClient() as client:
        tally = await send(client, router, 100)
    assert tally == Counter({"stable-1": 50, "stable-2": 50})


async def test_weight_changes_under_load_drop_no_request(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    done = asyncio.Event()

    async def worker() -> Counter[str]:
        tally: Counter[str] = Counter()
        async with httpx2.AsyncClient() as client:
            while not done.is_set():
                tally += await send(client, router, 5)
        return tally

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for step, weight in enumerate((10, 50, 100, 0, 100, 0, 90, 100), start=1):
        while stable.state.requests + canary.state.requests < 30 * step:
            await asyncio.sleep(0.002)  # let traffic flow at this weight (polls real traffic)
        await router.set_weight(weight)
    done.set()
    total = sum((await asyncio.gather(*workers)), Counter())
    assert set(total) == {"stable-1", "canary-1"}, "every answer is a 200 from a backend"
    assert total["stable-1"] + total["canary-1"] == stable.state.requests + canary.state.requests
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 20) == Counter({"canary-1": 20})


async def test_header_route_changes_under_load_drop_no_request(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    route = HeaderRoute("qa", (HeaderMatch("x-canary", "always"),))
    done = asyncio.Event()

    async def worker() -> Counter[str]:
        tally: Counter[str] = Counter()
        async with httpx2.AsyncClient() as client:
            while not done.is_set():
                tally += await send(client, router, 5, headers={"x-canary": "always"})
        return tally

    workers = [asyncio.create_task(worker()) for _ in range(3)]
    for step in range(1, 9):
        while stable.state.requests + canary.state.requests < 20 * step:
            await asyncio.sleep(0.002)  # let traffic flow between changes (polls real traffic)
        await router.set_header_route(route if step % 2 else HeaderRoute("qa"))
    done.set()
    total = sum((await asyncio.gather(*workers)), Counter())
    assert set(total) == {"stable-1", "canary-1"}, "every answer is a 200 from a backend"


async def test_header_routes_send_matching_requests_to_canary(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(0)
    await router.set_header_route(
        HeaderRoute("always", (HeaderMatch("x-canary", "always", MatchKind.EXACT),))
    )
    await router.set_header_route(
        HeaderRoute("testers", (HeaderMatch("x-canary", "tester-", MatchKind.PREFIX),))
    )
    async with httpx2.AsyncClient() as client:

        async def tally(value: str | None) -> Counter[str]:
            headers = {} if value is None else {"x-canary": value}
            return await send(client, router, 10, headers=headers)

        assert await tally("always") == Counter({"canary-1": 10})
        assert await tally("tester-ann") == Counter({"canary-1": 10})
        assert await tally("sometimes") == Counter({"stable-1": 10})
        assert await tally(None) == Counter({"stable-1": 10})
        await router.set_header_route(HeaderRoute("always"))  # no matches: removed
        assert await tally("always") == Counter({"stable-1": 10})
        assert await tally("tester-bob") == Counter({"canary-1": 10})
        await router.set_header_route(
            HeaderRoute("beta", (HeaderMatch("x-canary", "^beta-[0-9]+$", MatchKind.REGEX),))
        )
        assert await tally("beta-42") == Counter({"canary-1": 10})
        assert await tally("beta-x") == Counter({"stable-1": 10})
        await router.remove_managed_routes()
        assert await tally("tester-bob") == Counter({"stable-1": 10})
        assert await tally("beta-42") == Counter({"stable-1": 10})


async def test_no_ready_endpoint_answers_503(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable = backends("stable-1", "aaa111")
    unready = backends("canary-1", "bbb222").endpoint(ready=False)
    await router.update_destinations(
        stable=Destination("app-stable", (stable.endpoint(),)),
        canary=Destination("app-canary", (unready,)),
    )
    await router.set_weight(100)
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 5) == Counter({"503": 5})
        await router.set_weight(0)
        assert await send(client, router, 5) == Counter({"stable-1": 5})
    snapshot = await router.metrics_snapshot()
    assert snapshot.requests(service="app-canary", pod_template_hash="", code_prefix="5") == 5


async def test_refused_endpoint_is_retried_on_another_endpoint(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    alive = backends("stable-1", "aaa111")
    stable = Destination("app-stable", (refused_endpoint("aaa111"), alive.endpoint()))
    await router.update_destinations(stable=stable, canary=Destination("app-canary"))
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 10) == Counter({"stable-1": 10})


async def test_every_endpoint_refusing_answers_a_gateway_error(
    make_router: RouterFactory,
) -> None:
    router = await make_router()
    dead = Destination("app-stable", (refused_endpoint("aaa111"), refused_endpoint("aaa111")))
    await router.update_destinations(stable=dead, canary=Destination("app-canary"))
    expected = "503" if router.type_name == "haproxy" else "502"  # HAProxy's own choice
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 3) == Counter({expected: 3})


async def test_metrics_count_requests_per_hash_and_code(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    canary.state.status = 500
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(25)
    async with httpx2.AsyncClient() as client:
        seen = await send(client, router, 40)
        host, port = router.metrics_address
        text = (await client.get(f"http://{host}:{port}/metrics")).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    counts = {
        (s.labels["rollouts_pod_template_hash"], s.labels["code"], s.labels["service"]): s.value
        for s in families["headway_requests"].samples
    }
    assert set(seen) == {"stable-1", "500"} and seen.total() == 40
    assert counts == {
        ("aaa111", code_label(router, 200), "app-stable"): seen["stable-1"],
        ("bbb222", code_label(router, 500), "app-canary"): seen["500"],
    }
    histogram = {
        (s.name, s.labels["rollouts_pod_template_hash"], s.labels.get("le")): s.value
        for s in families["headway_request_duration_seconds"].samples
    }
    errors = seen["500"]
    assert histogram["headway_request_duration_seconds_count", "bbb222", None] == errors
    assert histogram["headway_request_duration_seconds_bucket", "bbb222", "+Inf"] == errors
    assert histogram["headway_request_duration_seconds_bucket", "aaa111", "+Inf"] == 40 - errors
    snapshot = await router.metrics_snapshot()
    assert snapshot.requests(pod_template_hash="bbb222", code_prefix="5") == errors
    assert snapshot.requests(pod_template_hash="aaa111", code_prefix="5") == 0


async def test_replaced_pods_take_traffic_and_keep_their_own_counts(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    old, new = backends("stable-old", "aaa111"), backends("stable-new", "ccc333")
    await router.update_destinations(**destinations([old], []))
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 7) == Counter({"stable-old": 7})
        await router.update_destinations(**destinations([new], []))
        assert await send(client, router, 5) == Counter({"stable-new": 5})
    snapshot = await router.metrics_snapshot()
    assert snapshot.requests(pod_template_hash="aaa111") == 7
    assert snapshot.requests(pod_template_hash="ccc333") == 5


async def test_verify_weight_reports_the_applied_weight(make_router: RouterFactory) -> None:
    router = await make_router()
    await router.set_weight(30)
    assert await router.verify_weight(30) is True
    assert await router.verify_weight(40) is False


@pytest.mark.parametrize("weight", [-1, 101])
async def test_weights_outside_0_100_are_refused(make_router: RouterFactory, weight: int) -> None:
    router = await make_router()
    with pytest.raises(RouterError, match=r"within 0\.\.100"):
        await router.set_weight(weight)
    assert base_url(router).startswith("http://127.0.0.1:")


async def test_a_repeated_header_is_matched_on_its_first_value(
    make_router: RouterFactory, backends: MakeBackend
) -> None:
    router = await make_router()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_header_route(HeaderRoute("qa", (HeaderMatch("x-canary", "always"),)))
    async with httpx2.AsyncClient() as client:
        first = [("x-canary", "always"), ("x-canary", "never")]
        second = [("x-canary", "never"), ("x-canary", "always")]
        assert await send(client, router, 3, headers=first) == Counter({"canary-1": 3})
        assert await send(client, router, 3, headers=second) == Counter({"stable-1": 3})
