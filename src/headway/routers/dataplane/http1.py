"""Just enough HTTP/1.1 for a reverse proxy: heads, body framing, raw body relay.

Bodies are never decoded: chunked bodies are relayed with their chunk framing intact, so
the proxy forwards exactly the bytes it received. Parsing is strict where ambiguity would let
a request be read differently by the proxy and the backend (both Content-Length and
Transfer-Encoding, a bad length): such requests get a 400.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "BadMessage",
    "Framing",
    "MessageHead",
    "RequestHandler",
    "client_wants_close",
    "encode_head",
    "parse_head",
    "read_head",
    "read_raw_body",
    "relay_body",
    "request_framing",
    "response_framing",
    "serve_connection",
    "simple_response",
]

MAX_HEAD_BYTES = 64 * 1024
RELAY_CHUNK = 64 * 1024
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "upgrade", "proxy-authenticate"}
)
ERROR_REASONS = {400: "Bad Request", 431: "Request Header Fields Too Large", 501: "Not Implemented"}
STATUS_WITHOUT_BODY = frozenset({204, 304})


class BadMessage(Exception):
    """A message that cannot be read safely; `status` is what a server should answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status

    @property
    def reason(self) -> str:
        return ERROR_REASONS.get(self.status, "Bad Request")


@dataclass(frozen=True)
class MessageHead:
    """A request line or status line, and the headers in their original order."""

    start: tuple[str, str, str]  # (method, target, version) or (version, status, reason)
    headers: tuple[tuple[str, str], ...]

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None

    def connection_tokens(self) -> frozenset[str]:
        value = self.header("connection") or ""
        return frozenset(token.strip().lower() for token in value.split(",") if token.strip())


@dataclass(frozen=True)
class Framing:
    """How a body ends: no body, a known length, chunked, or at connection close."""

    kind: str  # "none" | "length" | "chunked" | "close"
    length: int = 0


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    """The bytes of the next head up to the blank line, or None on a clean end of stream."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if not error.partial.strip():
            return None
        raise BadMessage("connection closed in the middle of a message head") from error
    except asyncio.LimitOverrunError as error:
        raise BadMessage("message head too large", status=431) from error


def parse_head(raw: bytes) -> MessageHead:
    """Split a head into its start line and headers; raises BadMessage when malformed."""
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError as error:  # pragma: no cover - latin-1 decodes every byte
        raise BadMessage("undecodable head") from error
    lines = text.split("\r\n")
    while lines and lines[-1] == "":
        lines.pop()
    parts = lines[0].split(" ", 2) if lines else []
    if len(parts) < 2:
        raise BadMessage(f"malformed start line {lines[0][:80]!r}" if lines else "empty head")
    start = (parts[0], parts[1], parts[2] if len(parts) == 3 else "")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadMessage(f"malformed header line {line[:80]!r}")
        headers.append((name, value.strip()))
    return MessageHead(start=start, headers=tuple(headers))


def _declared_length(head: MessageHead) -> int | None:
    values = {v.strip() for k, v in head.headers if k.lower() == "content-length"}
    if not values:
        return None
    if len(values) > 1 or not next(iter(values)).isdigit():
        raise BadMessage(f"invalid Content-Length {sorted(values)}")
    return int(next(iter(values)))


def request_framing(head: MessageHead) -> Framing:
    encoding = head.header("transfer-encoding")
    length = _declared_length(head)
    if encoding is not None:
        if length is not None:
            raise BadMessage("both Transfer-Encoding and Content-Length")
        if encoding.lower().split(",")[-1].strip() != "chunked":
            raise BadMessage(f"unsupported Transfer-Encoding {encoding!r}", status=501)
        return Framing("chunked")
    return Framing("length", length) if length else Framing("none")


def response_framing(head: MessageHead, *, request_method: str) -> Framing:
    status = int(head.start[1])
    if request_method == "HEAD" or status < 200 or status in STATUS_WITHOUT_BODY:
        return Framing("none")
    encoding = head.header("transfer-encoding")
    if encoding is not None and encoding.lower().split(",")[-1].strip() == "chunked":
        return Framing("chunked")
    length = _declared_length(head)
    if length is not None and encoding is None:
        return Framing("length", length)
    return Framing("close")


async def _next_chunk(reader: asyncio.StreamReader) -> tuple[bytes, bool]:
    """One chunk with its framing, and whether it was the last (with its trailers)."""
    try:
        return await _read_chunk(reader)
    except asyncio.LimitOverrunError as error:
        raise BadMessage("chunk size or trailer line too long") from error


async def _read_chunk(reader: asyncio.StreamReader) -> tuple[bytes, bool]:
    size_line = await reader.readuntil(b"\r\n")
    try:
        size = int(size_line.split(b";", 1)[0].strip(), 16)
    except ValueError as error:
        raise BadMessage(f"invalid chunk size line {size_line[:40]!r}") from error
    if size > 0:
        return size_line + await reader.readexactly(size + 2), False
    pieces = [size_line]
    while True:  # trailers, then the empty line
        line = await reader.readuntil(b"\r\n")
        pieces.append(line)
        if line == b"\r\n":
            return b"".join(pieces), True


async def read_raw_body(reader: asyncio.StreamReader, framing: Framing) -> bytes:
    """The whole body as received, framing included; for requests, so they can be retried."""
    if framing.kind == "none":
        return b""
    if framing.kind == "length":
        return await reader.readexactly(framing.length)
    if framing.kind == "chunked":
        collected: list[bytes] = []
        last = False
        while not last:
            chunk, last = await _next_chunk(reader)
            collected.append(chunk)
        return b"".join(collected)
    return await reader.read()


async def relay_body(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    framing: Framing,
    *,
    head: bytes = b"",
) -> None:
    """Write `head`, then copy the body from `reader` without buffering all of it.

    With a known length the head goes out together with the first body bytes: one send
    instead of two per response. Chunked and close-delimited bodies may be streams (e.g.
    server-sent events), so their head is sent at once.
    """
    if framing.kind != "length":
        writer.write(head)
        head = b""
    if framing.kind == "length":
        remaining = framing.length
        while remaining:
            data = await reader.read(min(remaining, RELAY_CHUNK))
            if not data:
                raise asyncio.IncompleteReadError(b"", remaining)
            writer.write(head + data if head else data)
            head = b""
            remaining -= len(data)
            await writer.drain()
        if head:
            writer.write(head)
    elif framing.kind == "chunked":
        last = False
        while not last:
            chunk, last = await _next_chunk(reader)
            writer.write(chunk)
            await writer.drain()
    elif framing.kind == "close":
        while data := await reader.read(RELAY_CHUNK):
            writer.write(data)
            await writer.drain()


def client_wants_close(head: MessageHead) -> bool:
    """Whether the client asked to close after this request (HTTP/1.0 always does here)."""
    return head.start[2] != "HTTP/1.1" or "close" in head.connection_tokens()


def encode_head(start: tuple[str, str, str], headers: list[tuple[str, str]]) -> bytes:
    lines = [" ".join(part for part in start if part)]
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def simple_response(
    status: int, reason: str, body: bytes, *, content_type: str = "text/plain", close: bool
) -> bytes:
    """A complete response with a Content-Length body, for answers the proxy makes itself."""
    headers = [("content-type", content_type), ("content-length", str(len(body)))]
    if close:
        headers.append(("connection", "close"))
    return encode_head(("HTTP/1.1", str(status), reason), headers) + body


class RequestHandler(Protocol):
    def __call__(
        self, head: MessageHead, body: bytes, *, client_ip: str, client: asyncio.StreamWriter
    ) -> Awaitable[bool]:
        """Answer one request on `client`; whether the connection stays open."""
        ...


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    clients: set[asyncio.StreamWriter],
    handle: RequestHandler,
) -> None:
    """Serve one client connection of a proxy: each request (after a `100 Continue` when
    asked) goes to `handle` until it or the client closes; a request that cannot be read
    safely gets its 4xx answer and the connection closes. The connection is in `clients`
    while it is served, so the proxy can close every open one when it stops."""
    clients.add(writer)
    peer = writer.get_extra_info("peername")
    client_ip = str(peer[0]) if isinstance(peer, tuple) else ""
    try:
        while (raw := await read_head(reader)) is not None:
            head = parse_head(raw)
            framing = request_framing(head)
            if (head.header("expect") or "").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = await read_raw_body(reader, framing)
            if not await handle(head, body, client_ip=client_ip, client=writer):
                break
    except BadMessage as error:
        writer.write(simple_response(error.status, error.reason, f"{error}\n".encode(), close=True))
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        clients.discard(writer)
        writer.close()
