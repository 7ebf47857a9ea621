"""Mirroring for the embedded router: copies of requests sent to the canary, fire and forget.

Istio's `mirror` (what Argo's `setMirrorRoute` writes) serves a matching request as usual and
sends a copy to another destination whose answer is thrown away. Here:

* **Which requests.** The mirror routes are tried in order; the first whose match holds takes
  the request. Of the requests a route takes, exactly `percentage` percent are copied, spread
  evenly (a credit grows by the percentage per request and a copy is sent each time it passes
  100): at 50 % every second request, so N matching requests give ⌊N × P / 100⌋ copies. Envoy
  picks at random; an exact count lets a test, and an analysis, know what the canary saw.
* **Never on the client's path.** A copy is a task started before the primary request is
  relayed and never awaited by it. It opens its own connection (`Connection: close`), with
  the Host header suffixed `-shadow` as Envoy does, reads the whole answer and drops it. A
  canary that refuses, hangs or fails costs the client nothing. At most `max_in_flight`
  copies run at once; beyond that a copy is skipped (counted in `skipped`), so a slow canary
  cannot pile up memory.
* **Counted.** Each copy's answer is recorded in the router's request metrics like any
  request, under the canary's Service and the answering pod's hash, with the mirror route's
  name as `route` (a refused connection is a 502, no answer within the timeout a 504), as
  Istio's telemetry reports the canary's shadow requests.
"""

from __future__ import annotations

import asyncio
import contextlib

from headway.clock import Clock
from headway.routers.dataplane import http1
from headway.routers.dataplane.metrics import RequestMetrics
from headway.routers.dataplane.protocol import Endpoint, MirrorRoute

__all__ = ["MirrorSender", "MirrorTable", "shadow_request"]

SHADOW_SUFFIX = "-shadow"


class MirrorTable:
    """The mirror routes and how many of each route's requests have earned a copy."""

    def __init__(self) -> None:
        self._routes: dict[str, MirrorRoute] = {}
        self._credit: dict[str, float] = {}

    def __bool__(self) -> bool:
        return bool(self._routes)

    def set(self, route: MirrorRoute) -> None:
        if not route.matches:
            self._routes.pop(route.name, None)
            self._credit.pop(route.name, None)
        elif self._routes.get(route.name) != route:
            self._routes[route.name] = route
            self._credit[route.name] = 0.0

    def clear(self) -> None:
        self._routes.clear()
        self._credit.clear()

    def copy_for(self, head: http1.MessageHead) -> str:
        """The name of the mirror route that copies this request, or "" (no route takes it,
        or its percentage does not earn a copy this time)."""
        for name, route in self._routes.items():
            if any(m.matches(lambda field: _request_value(head, field)) for m in route.matches):
                self._credit[name] += route.percentage
                if self._credit[name] >= 100:
                    self._credit[name] -= 100
                    return name
                return ""
        return ""


def _request_value(head: http1.MessageHead, field: str) -> str | None:
    if field == ":method":
        return head.start[0]
    if field == ":path":
        return head.start[1]
    return head.header(field)


def shadow_request(head: http1.MessageHead, body: bytes, *, client_ip: str) -> bytes:
    """The copy a mirror sends: hop-by-hop headers gone, the Host suffixed `-shadow`,
    X-Forwarded-For appended, and `Connection: close` (one request per connection)."""
    drop = http1.HOP_BY_HOP | head.connection_tokens() | {"expect", "x-forwarded-for", "host"}
    headers = [(k, v) for k, v in head.headers if k.lower() not in drop]
    host = head.header("host")
    if host:
        name, colon, port = host.partition(":")
        headers.insert(0, ("host", f"{name}{SHADOW_SUFFIX}{colon}{port}"))
    earlier = [v for k, v in head.headers if k.lower() == "x-forwarded-for"]
    headers.append(("x-forwarded-for", ", ".join([*earlier, client_ip])))
    headers.append(("connection", "close"))
    method, target, _version = head.start
    return http1.encode_head((method, target, "HTTP/1.1"), headers) + body


class MirrorSender:
    """Sends copies in the background and records their answers."""

    def __init__(
        self,
        *,
        metrics: RequestMetrics,
        clock: Clock,
        timeout: float,
        max_in_flight: int = 64,
    ) -> None:
        self._metrics = metrics
        self._clock = clock
        self._timeout = timeout
        self._max_in_flight = max_in_flight
        self._tasks: set[asyncio.Task[None]] = set()
        self.sent = 0  # copies started
        self.skipped = 0

    def send(self, *, route: str, service: str, endpoint: Endpoint, request: bytes) -> None:
        """Start one copy and return at once."""
        if len(self._tasks) >= self._max_in_flight:
            self.skipped += 1
            return
        self.sent += 1
        task = asyncio.create_task(self._copy(route, service, endpoint, request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _copy(self, route: str, service: str, endpoint: Endpoint, request: bytes) -> None:
        started = self._clock.monotonic()
        code = await self._exchange(endpoint, request)
        self._metrics.observe(
            service=service,
            pod_template_hash=endpoint.pod_template_hash,
            route=route,
            code=code,
            seconds=self._clock.monotonic() - started,
        )

    async def _exchange(self, endpoint: Endpoint, request: bytes) -> str:
        """The status code of the copy's answer ("502" refused or broken, "504" too slow)."""
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(self._timeout):
                reader, writer = await asyncio.open_connection(endpoint.host, endpoint.port)
                writer.write(request)
                await writer.drain()
                raw = await http1.read_head(reader)
                if raw is None:
                    return "502"
                head = http1.parse_head(raw)
                method = request.split(b" ", 1)[0].decode("latin-1")
                framing = http1.response_framing(head, request_method=method)
                await http1.read_raw_body(reader, framing)  # read whole, then discarded
                return head.start[1]
        except TimeoutError:
            return "504"
        except (OSError, ValueError, asyncio.IncompleteReadError, http1.BadMessage):
            return "502"
        finally:
            if writer is not None:
                writer.close()
