"""One request/response exchange between the embedded proxy and one backend endpoint."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from headway.routers.dataplane import http1
from headway.routers.dataplane.embedded.upstreams import UpstreamConnection, UpstreamPool
from headway.routers.dataplane.protocol import Endpoint

__all__ = ["Exchange", "ExchangeResult", "UpstreamFailed"]


@dataclass(frozen=True)
class ExchangeResult:
    status: int
    pod_template_hash: str
    keep_alive: bool  # whether the client connection may serve another request


class UpstreamFailed(Exception):
    """The endpoint accepted the connection but gave no usable response head."""

    def __init__(self, message: str, *, status: int = 502, reason: str = "Bad Gateway") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class _NoAnswer(Exception):
    """The connection ended or broke before a response head arrived."""


class Exchange:
    """Sends a request to an endpoint and relays the response to the client."""

    def __init__(self, pool: UpstreamPool, *, upstream_timeout: float) -> None:
        self._pool = pool
        self._timeout = upstream_timeout

    @staticmethod
    def encode_request(head: http1.MessageHead, body: bytes, *, client_ip: str) -> bytes:
        """The request as the backend sees it: hop-by-hop headers gone, X-Forwarded-For added."""
        drop = http1.HOP_BY_HOP | head.connection_tokens() | {"expect", "x-forwarded-for"}
        headers = [(k, v) for k, v in head.headers if k.lower() not in drop]
        earlier = [v for k, v in head.headers if k.lower() == "x-forwarded-for"]
        headers.append(("x-forwarded-for", ", ".join([*earlier, client_ip])))
        method, target, _version = head.start
        return http1.encode_head((method, target, "HTTP/1.1"), headers) + body

    async def run(
        self,
        endpoint: Endpoint,
        request: bytes,
        method: str,
        *,
        client: asyncio.StreamWriter,
        close: bool,
    ) -> ExchangeResult:
        """Relay one exchange; raises ConnectFailed (nothing sent) or UpstreamFailed."""
        connection, response = await self._send(endpoint, request)
        status = int(response.start[1])
        framing = http1.response_framing(response, request_method=method)
        keep_client = not close and framing.kind != "close"
        head = self._client_head(response, keep_alive=keep_client)
        try:
            await http1.relay_body(connection.reader, client, framing, head=head)
            await client.drain()
        except (ConnectionError, asyncio.IncompleteReadError, http1.BadMessage):
            connection.close()
            return ExchangeResult(status, endpoint.pod_template_hash, keep_alive=False)
        reusable = framing.kind != "close" and "close" not in response.connection_tokens()
        if reusable and response.start[0] == "HTTP/1.1":
            self._pool.give_back(endpoint.host, endpoint.port, connection)
        else:
            connection.close()
        return ExchangeResult(status, endpoint.pod_template_hash, keep_alive=keep_client)

    async def _send(
        self, endpoint: Endpoint, request: bytes
    ) -> tuple[UpstreamConnection, http1.MessageHead]:
        idle = self._pool.take_idle(endpoint.host, endpoint.port)
        if idle is not None:
            try:
                return idle, await self._round_trip(idle, request)
            except _NoAnswer:  # the backend closed an idle keep-alive connection; reconnect
                idle.close()
        fresh = await self._pool.open(endpoint.host, endpoint.port)
        try:
            return fresh, await self._round_trip(fresh, request)
        except _NoAnswer as error:
            fresh.close()
            raise UpstreamFailed(f"{endpoint.host}:{endpoint.port}: {error}") from error

    async def _round_trip(
        self, connection: UpstreamConnection, request: bytes
    ) -> http1.MessageHead:
        try:
            connection.writer.write(request)
            await connection.writer.drain()
            async with asyncio.timeout(self._timeout):  # no extra task, unlike wait_for
                return await self._final_head(connection)
        except TimeoutError as error:
            connection.close()
            raise UpstreamFailed(
                f"no response within {self._timeout}s", status=504, reason="Gateway Timeout"
            ) from error
        except (ConnectionError, asyncio.IncompleteReadError, http1.BadMessage) as error:
            raise _NoAnswer(str(error) or type(error).__name__) from error

    @staticmethod
    async def _final_head(connection: UpstreamConnection) -> http1.MessageHead:
        """The first non-informational response head (1xx interim responses are dropped)."""
        while True:
            raw = await http1.read_head(connection.reader)
            if raw is None:
                raise _NoAnswer("connection closed before a response")
            head = http1.parse_head(raw)
            code = head.start[1]
            if len(code) != 3 or not code.isdigit():
                raise _NoAnswer(f"malformed status {code!r}")
            if not code.startswith("1") or code == "101":
                return head

    @staticmethod
    def _client_head(response: http1.MessageHead, *, keep_alive: bool) -> bytes:
        drop = http1.HOP_BY_HOP | response.connection_tokens()
        headers = [(k, v) for k, v in response.headers if k.lower() not in drop]
        if not keep_alive:
            headers.append(("connection", "close"))
        _version, status, reason = response.start
        return http1.encode_head(("HTTP/1.1", status, reason or "-"), headers)
