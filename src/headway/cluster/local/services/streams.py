"""Byte plumbing shared by the runtime's plain-HTTP front doors (the Ingress listeners and
the per-namespace name proxy): a short plain-text answer, and one direction of a relay."""

from __future__ import annotations

import asyncio
import contextlib
from http import HTTPStatus

__all__ = ["answer", "pipe"]


async def answer(writer: asyncio.StreamWriter, code: int, message: str) -> None:
    """A complete `code` response whose body is `message`, then the connection closes."""
    body = (message + "\n").encode()
    writer.write(f"HTTP/1.1 {code} {HTTPStatus(code).phrase}\r\nContent-Type: text/plain\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()


async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy `source` into `sink` until it ends (or either side fails), then half-close `sink`."""
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.write_eof()
