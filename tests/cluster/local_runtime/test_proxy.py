"""The Service proxy on real sockets: round-robin, a refusing endpoint, no endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from headway.cluster.local.network import free_port
from headway.cluster.local.services import Backend, TcpProxy


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
