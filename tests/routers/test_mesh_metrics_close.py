"""Closing a metrics endpoint (a router's, or the runtime-wide one of the local mesh) ends the
connections clients keep alive, so no handler is left to be cancelled (and logged as an error)
when the loop ends."""

from __future__ import annotations

import asyncio

from headway.routers.dataplane.metrics import MetricsServer


async def _nothing() -> str:
    return ""


async def test_close_ends_a_kept_alive_connection() -> None:
    server = MetricsServer(_nothing, host="127.0.0.1", port=0)
    await server.start()
    host, port = server.address
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    await server.close()
    rest = await asyncio.wait_for(reader.read(), timeout=3)  # EOF, not a hanging socket
    assert b"HTTP/1.1" not in rest
    writer.close()
