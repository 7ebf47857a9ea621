"""Real loopback servers for notification tests: an HTTP receiver and an SMTP server."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: str


@dataclass
class Receiver:
    """Answers each request with the next of `statuses` (then 200), recording it first.
    `hold` (when set by a test) keeps requests waiting until it is released."""

    url: str = ""
    requests: list[Request] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    answer: bytes = b"{}"
    hold: threading.Event | None = None
    arrived: threading.Event = field(default_factory=threading.Event)


def serve_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            receiver.requests.append(Request(self.command, self.path, dict(self.headers), body))
            receiver.arrived.set()
            if receiver.hold is not None:
                receiver.hold.wait(30)
            status = receiver.statuses.pop(0) if receiver.statuses else 200
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(receiver.answer)

        do_POST = do_PUT = do_GET = _any  # noqa: N815 (BaseHTTPRequestHandler names)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield receiver
    if receiver.hold is not None:
        receiver.hold.set()
    server.shutdown()
    server.server_close()


@dataclass
class Mailbox:
    port: int = 0
    messages: list[Message] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_smtp() -> Iterator[Mailbox]:
    mailbox = Mailbox(port=free_port())
    controller = Controller(mailbox, hostname="127.0.0.1", port=mailbox.port)
    controller.start()
    yield mailbox
    controller.stop()


async def eventually(check: Callable[[], Any], *, timeout: float, what: str) -> Any:
    """Poll `check` (letting other tasks run) until it is truthy, or fail after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while loop.time() < deadline:
        last = check()
        if last:
            return last
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}: last {last!r}")
