"""The embedded router: an asyncio HTTP/1.1 reverse proxy that needs nothing installed.

For each request: the header routes first (any match sends it to canary), then the mirror
routes (a copy to the canary, fire and forget: see `mirroring`), then a smooth weighted
round-robin choice between stable, canary and any additional destinations (exact shares, see
`balancing`), then round-robin across that destination's ready endpoints. If an endpoint
refuses the connection the request goes once to the next endpoint of the same destination;
if that fails too the answer is 502. A destination with no ready endpoint answers 503. Both
sides keep connections alive; bodies are relayed byte for byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from headway.clock import Clock, SystemClock
from headway.routers.dataplane import http1
from headway.routers.dataplane.embedded.balancing import EndpointRotation, SmoothWeightedChooser
from headway.routers.dataplane.embedded.exchange import Exchange, ExchangeResult, UpstreamFailed
from headway.routers.dataplane.embedded.mirroring import MirrorSender, MirrorTable, shadow_request
from headway.routers.dataplane.embedded.upstreams import ConnectFailed, UpstreamPool
from headway.routers.dataplane.metrics import (
    MetricsServer,
    MetricsSnapshot,
    RequestMetrics,
    render_prometheus,
)
from headway.routers.dataplane.protocol import (
    Destination,
    Endpoint,
    HeaderRoute,
    MirrorRoute,
    RouterError,
    TrafficRouter,
    WeightDestination,
    validate_weights,
)

__all__ = ["EmbeddedRouter"]

MAX_ENDPOINT_ATTEMPTS = 2  # the chosen endpoint, then one other on a refused connection


@dataclass(frozen=True)
class _Choice:
    destination: Destination
    route: str  # the header route's name, or "" for the weighted split


class EmbeddedRouter:
    """A `TrafficRouter` that is itself the data plane."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        metrics_host: str = "127.0.0.1",
        metrics_port: int = 0,
        clock: Clock | None = None,
        upstream_timeout: float = 60.0,
    ) -> None:
        self._host, self._port = host, port
        self._clock: Clock = clock or SystemClock()
        self._metrics = RequestMetrics()
        self._metrics_server = MetricsServer(
            self._render_metrics, host=metrics_host, port=metrics_port
        )
        self._pool = UpstreamPool()
        self._exchange = Exchange(self._pool, upstream_timeout=upstream_timeout)
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self._destinations: tuple[Destination, ...] = (Destination("stable"), Destination("canary"))
        self._canary_weight = 0
        self._additional_weights: dict[str, int] = {}
        self._chooser = SmoothWeightedChooser([100, 0])
        self._rotations: dict[str, EndpointRotation] = {}
        self._routes: dict[str, HeaderRoute] = {}
        self._mirrors = MirrorTable()
        self._shadow = MirrorSender(
            metrics=self._metrics, clock=self._clock, timeout=upstream_timeout
        )

    @property
    def type_name(self) -> str:
        return "embedded"

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the embedded router is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    @property
    def metrics_address(self) -> tuple[str, int]:
        return self._metrics_server.address

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve_client, self._host, self._port)
        await self._metrics_server.start()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._clients):
                writer.close()
            await self._server.wait_closed()
            self._server = None
        await self._metrics_server.close()
        await self._shadow.close()
        self._pool.close_all()

    async def update_destinations(
        self, *, stable: Destination, canary: Destination, additional: Sequence[Destination] = ()
    ) -> None:
        destinations = (stable, canary, *additional)
        names = [d.service for d in destinations]
        if len(set(names)) != len(names):
            raise RouterError(f"destination services must be distinct, got {names}")
        self._destinations = destinations
        self._pool.forget_except({(e.host, e.port) for d in destinations for e in d.endpoints})
        self._rebuild_chooser()

    async def set_weight(self, weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        validate_weights(weight, additional)
        known = {d.service for d in self._destinations[2:]}
        unknown = [d.service for d in additional if d.service not in known]
        if unknown:
            raise RouterError(f"additional destinations {unknown} were never given endpoints")
        self._canary_weight = weight
        self._additional_weights = {d.service: d.weight for d in additional}
        self._rebuild_chooser()

    async def verify_weight(
        self, weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        return self._current_shares() == self._shares_for(weight, additional)

    async def set_header_route(self, route: HeaderRoute) -> None:
        if route.matches:
            self._routes[route.name] = route
        else:
            self._routes.pop(route.name, None)

    async def set_mirror_route(self, route: MirrorRoute) -> None:
        self._mirrors.set(route)

    async def remove_managed_routes(self) -> None:
        self._routes.clear()
        self._mirrors.clear()

    @property
    def mirrors_sent(self) -> int:
        """Copies started (each is counted in the metrics once answered, or failed)."""
        return self._shadow.sent

    @property
    def mirrors_skipped(self) -> int:
        """Copies not sent because `max_in_flight` copies were still running."""
        return self._shadow.skipped

    async def _render_metrics(self) -> str:
        return render_prometheus(await self.metrics_snapshot())

    async def metrics_snapshot(self) -> MetricsSnapshot:
        return self._metrics.snapshot()

    # -- choosing ---------------------------------------------------------------------------

    def _current_shares(self) -> dict[str, int]:
        return dict(
            zip((d.service for d in self._destinations), self._chooser.weights, strict=True)
        )

    def _shares_for(self, weight: int, additional: Sequence[WeightDestination]) -> dict[str, int]:
        shares = {
            self._destinations[0].service: validate_weights(weight, additional),
            self._destinations[1].service: weight,
        }
        shares.update({d.service: 0 for d in self._destinations[2:]})
        shares.update({d.service: d.weight for d in additional})
        return shares

    def _rebuild_chooser(self) -> None:
        extra = [self._additional_weights.get(d.service, 0) for d in self._destinations[2:]]
        weights = [100 - self._canary_weight - sum(extra), self._canary_weight, *extra]
        if tuple(weights) != self._chooser.weights:
            self._chooser = SmoothWeightedChooser(weights)

    def _choose(self, head: http1.MessageHead) -> _Choice:
        for route in self._routes.values():
            if any(m.matches(head.header(m.header)) for m in route.matches):
                return _Choice(self._destinations[1], route.name)
        index = self._chooser.pick()
        return _Choice(self._destinations[0 if index is None else index], "")

    def _mirror(self, head: http1.MessageHead, body: bytes, *, client_ip: str) -> None:
        """Start a copy of this request to the canary when a mirror route earns one."""
        name = self._mirrors.copy_for(head)
        canary = self._destinations[1]
        endpoints = self._endpoint_order(canary) if name else []
        if endpoints:
            request = shadow_request(head, body, client_ip=client_ip)
            self._shadow.send(
                route=name, service=canary.service, endpoint=endpoints[0], request=request
            )

    def _endpoint_order(self, destination: Destination) -> list[Endpoint]:
        ready = destination.ready_endpoints
        rotation = self._rotations.setdefault(destination.service, EndpointRotation())
        return [ready[i] for i in rotation.order(len(ready))][:MAX_ENDPOINT_ATTEMPTS]

    # -- serving ----------------------------------------------------------------------------

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await http1.serve_connection(reader, writer, clients=self._clients, handle=self._proxy)

    async def _proxy(
        self,
        head: http1.MessageHead,
        body: bytes,
        *,
        client_ip: str,
        client: asyncio.StreamWriter,
    ) -> bool:
        """Answer one request; whether the client connection stays open."""
        started = self._clock.monotonic()
        choice = self._choose(head)
        if not choice.route and self._mirrors:
            self._mirror(head, body, client_ip=client_ip)
        close = http1.client_wants_close(head)
        result = await self._try_endpoints(
            choice, head, body, client_ip=client_ip, client=client, close=close
        )
        self._metrics.observe(
            service=choice.destination.service,
            pod_template_hash=result.pod_template_hash,
            route=choice.route,
            code=str(result.status),
            seconds=self._clock.monotonic() - started,
        )
        return result.keep_alive

    async def _try_endpoints(
        self,
        choice: _Choice,
        head: http1.MessageHead,
        body: bytes,
        *,
        client_ip: str,
        client: asyncio.StreamWriter,
        close: bool,
    ) -> ExchangeResult:
        endpoints = self._endpoint_order(choice.destination)
        if not endpoints:
            return await self._answer_self(
                client,
                status=503,
                reason="Service Unavailable",
                pod_hash="",
                close=close,
                message=f"no ready endpoint for {choice.destination.service}",
            )
        request = self._exchange.encode_request(head, body, client_ip=client_ip)
        for endpoint in endpoints:
            try:
                return await self._exchange.run(
                    endpoint, request, head.start[0], client=client, close=close
                )
            except ConnectFailed:
                continue
            except UpstreamFailed as failure:
                return await self._answer_self(
                    client,
                    status=failure.status,
                    reason=failure.reason,
                    pod_hash=endpoint.pod_template_hash,
                    close=close,
                    message=str(failure),
                )
        return await self._answer_self(
            client,
            status=502,
            reason="Bad Gateway",
            pod_hash=endpoints[-1].pod_template_hash,
            close=close,
            message=f"no endpoint of {choice.destination.service} accepted",
        )

    async def _answer_self(
        self,
        client: asyncio.StreamWriter,
        *,
        status: int,
        reason: str,
        pod_hash: str,
        close: bool,
        message: str,
    ) -> ExchangeResult:
        client.write(http1.simple_response(status, reason, f"{message}\n".encode(), close=close))
        await client.drain()
        return ExchangeResult(status=status, pod_template_hash=pod_hash, keep_alive=not close)


def _conforms_to_protocol(router: EmbeddedRouter) -> TrafficRouter:
    return router  # mypy proves EmbeddedRouter is a TrafficRouter
