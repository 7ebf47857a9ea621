"""Small real HTTP backends for router tests, independent of the code under test.

Each backend is a stdlib `ThreadingHTTPServer` speaking HTTP/1.1 with keep-alive. It answers
with a JSON body naming itself and its pod-template hash, and can be told to answer 500 or to
be "slow" (it advances a virtual clock, so latency assertions need no real waiting).
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from headway.clock import VirtualClock
from headway.routers.dataplane.protocol import Endpoint


@dataclass
class BackendState:
    name: str
    pod_hash: str
    status: int = 200
    virtual_delay: float = 0.0
    chunked_response: bool = False
    drop_keep_alive: bool = False  # close each connection after answering, without saying so
    clock: VirtualClock | None = None
    requests: int = 0
    last_headers: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0], 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b""):
                    pass
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("content-length") or 0))


def _handler_for(state: BackendState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes; without this, Nagle's algorithm
            # and the peer's delayed ACK add ~40 ms to every keep-alive response.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            body_in = _read_body(self)
            with state.lock:
                state.requests += 1
                state.last_headers = {k.lower(): v for k, v in self.headers.items()}
                if state.clock is not None and state.virtual_delay:
                    state.clock.advance(state.virtual_delay)
            payload = json.dumps(
                {
                    "backend": state.name,
                    "hash": state.pod_hash,
                    "body": body_in.decode(),
                    "path": self.path,
                }
            ).encode()
            self.send_response(state.status)
            self.send_header("content-type", "application/json")
            if state.chunked_response:
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                half = len(payload) // 2
                for piece in (payload[:half], payload[half:]):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            if state.drop_keep_alive:
                self.close_connection = True

        do_GET = do_POST = do_PUT = _answer  # noqa: N815

    return Handler


class Backend:
    """One pod: a listening HTTP server with a name and a pod-template hash."""

    def __init__(self, name: str, pod_hash: str, *, clock: VirtualClock | None = None) -> None:
        self.state = BackendState(name=name, pod_hash=pod_hash, clock=clock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self.state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def endpoint(self, *, ready: bool = True) -> Endpoint:
        return Endpoint("127.0.0.1", self.port, self.state.pod_hash, ready)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def refused_endpoint(pod_hash: str) -> Endpoint:
    """An endpoint on a loopback port where nothing listens, so connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return Endpoint("127.0.0.1", port, pod_hash)
