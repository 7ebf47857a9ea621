"""An Istio Gateway on the local mesh: one HTTP/1.1 listener that hands each request to the
router of the VirtualService its Host header names (`cluster.local.gateway_plan`).

The listener does no splitting of its own: the VirtualService's router behind it splits and
counts the request as if the client had called it directly. A Host no bound VirtualService
serves gets 404, as Istio's ingress answers; a router that refuses the connection, 502.
Both sides keep connections alive; bodies are relayed byte for byte.
"""

from __future__ import annotations

import asyncio

from headway.cluster.local.mesh.gateway_plan import GatewayRoute, choose_route
from headway.routers.dataplane import http1
from headway.routers.dataplane.embedded.exchange import Exchange, UpstreamFailed
from headway.routers.dataplane.embedded.upstreams import ConnectFailed, UpstreamPool
from headway.routers.dataplane.protocol import Endpoint

__all__ = ["GatewayListener"]


class GatewayListener:
    """A `cluster.local.mesh_plane.GatewayPlane`."""

    def __init__(self, *, name: str, port: int, upstream_timeout: float = 60.0) -> None:
        self._name = name
        self._port = port
        self._pool = UpstreamPool()
        self._exchange = Exchange(self._pool, upstream_timeout=upstream_timeout)
        self._routes: tuple[GatewayRoute, ...] = ()
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the gateway listener is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve_client, "127.0.0.1", self._port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._clients):
                writer.close()
            await self._server.wait_closed()
            self._server = None
        self._pool.close_all()

    async def configure(self, routes: tuple[GatewayRoute, ...]) -> None:
        self._routes = routes
        self._pool.forget_except({(r.host, r.port) for r in routes})

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await http1.serve_connection(reader, writer, clients=self._clients, handle=self._forward)

    async def _forward(
        self, head: http1.MessageHead, body: bytes, *, client_ip: str, client: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; whether the client connection stays open."""
        close = http1.client_wants_close(head)
        route = choose_route(self._routes, head.header("host"))
        if route is None:
            host = head.header("host") or "(no Host header)"
            message = f"no VirtualService bound to gateway {self._name} serves host {host}"
            return await self._answer(client, 404, "Not Found", message, close=close)
        request = self._exchange.encode_request(head, body, client_ip=client_ip)
        target = Endpoint(route.host, route.port, "")
        try:
            result = await self._exchange.run(
                target, request, head.start[0], client=client, close=close
            )
        except ConnectFailed:
            message = f"the router of VirtualService {route.virtual_service} refused"
            return await self._answer(client, 502, "Bad Gateway", message, close=close)
        except UpstreamFailed as failure:
            return await self._answer(
                client, failure.status, failure.reason, str(failure), close=close
            )
        return result.keep_alive

    @staticmethod
    async def _answer(
        client: asyncio.StreamWriter, status: int, reason: str, message: str, *, close: bool
    ) -> bool:
        client.write(http1.simple_response(status, reason, f"{message}\n".encode(), close=close))
        await client.drain()
        return not close
