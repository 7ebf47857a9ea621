"""What only the HAProxy router does: a real child process, slots, runtime-API limits."""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx2
import pytest

from conftest import require_program
from headway.routers.dataplane.haproxy.router import HAProxyRouter
from headway.routers.dataplane.protocol import (
    Destination,
    Endpoint,
    HeaderMatch,
    HeaderRoute,
    RouterError,
    WeightDestination,
)
from routers.backends import Backend
from routers.conftest import destinations, send

pytestmark = pytest.mark.haproxy

MakeBackend = Callable[[str, str], Backend]


def process_alive(pid: int) -> bool:
    """Whether /proc shows a live (not zombie) process with this id."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


@pytest.fixture
async def router(tmp_path: Path) -> AsyncIterator[HAProxyRouter]:
    router = HAProxyRouter(
        work_dir=tmp_path / "haproxy", binary=require_program("haproxy"), slots=2
    )
    await router.start()
    yield router
    await router.close()


async def test_runs_as_one_process_that_changes_without_reload_and_stops_cleanly(
    tmp_path: Path, backends: MakeBackend
) -> None:
    router = HAProxyRouter(work_dir=tmp_path / "h", binary=require_program("haproxy"))
    await router.start()
    pid = router.pid
    assert pid is not None and process_alive(pid)
    assert router.pid_file.read_text().strip() == str(pid)
    assert "haproxy" in Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    config_before = (tmp_path / "h" / "haproxy.cfg").read_text()
    stable, canary = backends("stable-1", "aaa111"), backends("canary-1", "bbb222")
    await router.update_destinations(**destinations([stable], [canary]))
    await router.set_weight(100)
    await router.set_header_route(HeaderRoute("qa", (HeaderMatch("x-canary", "always"),)))
    async with httpx2.AsyncClient() as client:
        assert await send(client, router, 4) == Counter({"canary-1": 4})
    assert router.pid == pid and process_alive(pid)
    assert (tmp_path / "h" / "haproxy.cfg").read_text() == config_before
    await router.close()
    await router.close()  # closing twice is harmless
    assert not process_alive(pid)
    assert not router.pid_file.exists()


async def test_a_process_left_on_the_same_work_dir_is_stopped_before_starting(
    tmp_path: Path,
) -> None:
    binary = require_program("haproxy")
    crashed = HAProxyRouter(work_dir=tmp_path / "h", binary=binary)
    await crashed.start()  # stands in for a run that died without close()
    stale_pid = crashed.pid
    assert stale_pid is not None
    successor = HAProxyRouter(work_dir=tmp_path / "h", binary=binary)
    await successor.start()
    try:
        assert not process_alive(stale_pid)
        assert successor.pid_file.read_text().strip() == str(successor.pid)
        await crashed.close()  # reaps the stale child, and leaves the successor's pidfile
        assert successor.pid_file.read_text().strip() == str(successor.pid)
    finally:
        await successor.close()
        await crashed.close()


async def test_a_port_in_use_fails_start_with_haproxy_reason_and_no_process(
    tmp_path: Path,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        router = HAProxyRouter(
            work_dir=tmp_path / "h", binary=require_program("haproxy"), port=port
        )
        with pytest.raises(RouterError, match="exited at start-up"):
            await router.start()
    assert router.pid is None
    await router.close()


async def test_header_on_an_unconfigured_header_is_refused(router: HAProxyRouter) -> None:
    route = HeaderRoute("qa", (HeaderMatch("x-tenant", "acme"),))
    with pytest.raises(RouterError, match=r"can only match \['x-canary'\]"):
        await router.set_header_route(route)


async def test_header_value_with_a_space_is_refused(router: HAProxyRouter) -> None:
    route = HeaderRoute("qa", (HeaderMatch("x-canary", "two words"),))
    with pytest.raises(RouterError, match="without spaces"):
        await router.set_header_route(route)


async def test_more_ready_endpoints_than_slots_is_refused(
    router: HAProxyRouter, backends: MakeBackend
) -> None:
    pods = [backends(f"stable-{i}", "aaa111") for i in range(3)]
    with pytest.raises(RouterError, match="only 2 haproxy slots"):
        await router.update_destinations(**destinations(pods, []))


async def test_slots_are_reused_as_pods_come_and_go(
    router: HAProxyRouter, backends: MakeBackend
) -> None:
    first, second, third = (backends(f"stable-{i}", f"hash{i}") for i in range(3))
    async with httpx2.AsyncClient() as client:
        for pods in ([first, second], [second, third], [third, first]):
            await router.update_destinations(**destinations(pods, []))
            tally = await send(client, router, 10)
            assert tally == Counter({pod.state.name: 5 for pod in pods})
    snapshot = await router.metrics_snapshot()
    assert [snapshot.requests(pod_template_hash=f"hash{i}") for i in range(3)] == [10, 10, 10]


async def test_hostnames_are_refused(router: HAProxyRouter) -> None:
    named = Destination("app-stable", (Endpoint("localhost", 8080, "aaa111"),))
    with pytest.raises(RouterError, match="needs an IP address"):
        await router.update_destinations(stable=named, canary=Destination("app-canary"))


async def test_additional_destinations_get_their_shares(
    router: HAProxyRouter, backends: MakeBackend
) -> None:
    """A weighted experiment's two templates beside stable and canary: HAProxy's weighted
    round-robin over the split's servers gives each its weight (the embedded router's test
    counts the same shares, tests/routers/test_embedded.py)."""
    pods = {n: backends(n, f"hash-{n}") for n in ("stable", "canary", "base", "preview")}
    await router.update_destinations(
        stable=Destination("app-stable", (pods["stable"].endpoint(),)),
        canary=Destination("app-canary", (pods["canary"].endpoint(),)),
        additional=[Destination("exp-base", (pods["base"].endpoint(),)),
                    Destination("exp-preview", (pods["preview"].endpoint(),))],
    )
    extra = [WeightDestination("exp-base", 10), WeightDestination("exp-preview", 10)]
    await router.set_weight(20, extra)
    assert await router.verify_weight(20, extra) is True
    assert await router.verify_weight(20) is False
    async with httpx2.AsyncClient() as client:
        await send(client, router, 100)  # HAProxy's phase settles in the first window
        tally = await send(client, router, 200)
    wanted = {"stable": 120, "canary": 40, "base": 20, "preview": 20}
    assert sum(tally.values()) == 200
    assert all(abs(tally[name] - count) <= 2 for name, count in wanted.items()), tally
    snapshot = await router.metrics_snapshot()
    assert snapshot.requests(pod_template_hash="hash-base") == pods["base"].state.requests
    with pytest.raises(RouterError, match="never given endpoints"):
        await router.set_weight(5, [WeightDestination("exp-other", 5)])
    await router.set_weight(20)  # the experiment ended: its share back to stable
    async with httpx2.AsyncClient() as client:
        after = await send(client, router, 100)
    assert set(after) == {"stable", "canary"} and abs(after["canary"] - 20) <= 2, after
    five = [Destination(f"x{i}") for i in range(5)]
    with pytest.raises(RouterError, match="at most 4 additional destinations"):
        await router.update_destinations(stable=Destination("a"), canary=Destination("b"),
                                         additional=five)


async def test_weight_changes_raise_one_server_before_lowering_the_other(
    router: HAProxyRouter,
) -> None:
    """0 -> 100 must never pass through stable=0, canary=0, when HAProxy would answer 503."""
    sent: list[str] = []
    real_run = router._admin.run

    async def recording_run(*commands: str, check: bool = True) -> str:
        sent.extend(c for c in commands if c.startswith("set weight"))
        return await real_run(*commands, check=check)

    router._admin.run = recording_run  # type: ignore[method-assign]
    await router.set_weight(100)
    await router.set_weight(0)
    assert sent == [
        "set weight split/canary 100",
        "set weight split/stable 0",
        "set weight split/stable 100",
        "set weight split/canary 0",
    ]
    assert await router.verify_weight(0) is True


async def test_a_relative_work_dir_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # as `headway runtime up --state-dir s4` from a shell
    router = HAProxyRouter(work_dir=Path("s4") / "mesh", binary=require_program("haproxy"))
    await router.start()
    try:
        assert router.pid is not None and process_alive(router.pid)
        config = (tmp_path / "s4" / "mesh" / "haproxy.cfg").read_text()
        assert f"stats socket {tmp_path / 's4' / 'mesh' / 'admin.sock'} " in config
    finally:
        await router.close()
