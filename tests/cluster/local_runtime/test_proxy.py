"""The Service proxy on real sockets: round-robin, a refusing endpoint, no endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cluster.store_bypass import force_field
from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.kubelet.network import free_port
from headway.cluster.local.services.proxies import Backend, ServiceProxies, TcpProxy, service_ports


async def _named_server(name: str) -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(name.encode())
        await writer.drain()
        writer.close()

    port = free_port()
    return await asyncio.start_server(handle, "127.0.0.1", port), port


async def _ask(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"hi")
    writer.write_eof()
    answer = await reader.read()
    writer.close()
    return answer


@pytest.fixture
async def proxy() -> AsyncIterator[TcpProxy]:
    proxy = TcpProxy(free_port())
    await proxy.start()
    yield proxy
    await proxy.close()


async def test_round_robin_over_ready_backends(proxy: TcpProxy) -> None:
    a, port_a = await _named_server("a")
    b, port_b = await _named_server("b")
    async with a, b:
        proxy.set_backends((Backend("127.0.0.1", port_a, "a"), Backend("127.0.0.1", port_b, "b")))
        answers = [await _ask(proxy.port) for _ in range(6)]
    assert sorted(answers) == [b"a", b"a", b"a", b"b", b"b", b"b"]
    assert answers[0] != answers[1]


async def test_a_refusing_endpoint_is_skipped(proxy: TcpProxy) -> None:
    live, port = await _named_server("live")
    async with live:
        proxy.set_backends(
            (Backend("127.0.0.1", free_port(), "gone"), Backend("127.0.0.1", port, "live"))
        )
        assert [await _ask(proxy.port) for _ in range(4)] == [b"live"] * 4


async def test_no_endpoint_closes_the_connection(proxy: TcpProxy) -> None:
    try:
        answer = await _ask(proxy.port)
    except ConnectionResetError:
        answer = b""  # closed with our bytes unread: the kernel resets instead
    assert answer == b""


async def test_a_malformed_service_is_reported_and_the_others_get_their_port(
    tmp_path: Path,
) -> None:
    problems: list[tuple[str, str]] = []
    with LocalCluster(tmp_path / "store.db", VirtualClock()) as cluster:
        for name in ("bad", "good"):
            cluster.apply(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"ports": [{"port": 80}]},
                },
                field_manager="test",
            )
        force_field(cluster.path, kind="Service", name="bad", path="$.spec.ports", value=5)
        proxies = ServiceProxies(
            cluster, on_error=lambda svc, msg: problems.append((svc["metadata"]["name"], msg))
        )
        await proxies.sync()  # a TypeError for "bad" stopped the whole runtime before
        good = cluster.get("v1", "Service", "good", "default")
        assert len(service_ports(good)) == 1
        await _ask_refused_or_closed(service_ports(good)[0])
        for svc in cluster.list("v1", "Service"):
            cluster.delete("v1", "Service", svc["metadata"]["name"], "default")
        await proxies.sync()  # closes the proxy it opened
    assert problems == [("bad", "TypeError: 'int' object is not iterable")]


async def _ask_refused_or_closed(port: int) -> None:
    """The port listens (no Pod behind it: the proxy closes the connection)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert await reader.read() == b""
    writer.close()
