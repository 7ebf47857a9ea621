"""The `TrafficRouter` protocol and the values routers are given.

The shape follows Argo Rollouts' traffic-routing reconciler (set weight, set header route,
verify weight, remove managed routes, type), with one difference that suits a local runtime:
a router is not told pod hashes and left to find Services itself. The caller hands it its
destinations — one `Destination` per Service, each with the endpoints (pods) behind it — and
calls `update_destinations` again whenever pods come, go or change readiness.

Every method that may touch the network is `async`: the embedded proxy is an asyncio server
and HAProxy's runtime API is a socket, so one event loop drives both and the controller never
blocks a thread on a router. `type_name` and the address properties are plain attributes
because they never do I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from headway.routers.dataplane.metrics import MetricsSnapshot

__all__ = [
    "Destination",
    "Endpoint",
    "HeaderMatch",
    "HeaderRoute",
    "MatchKind",
    "MirrorRoute",
    "RequestMatch",
    "RouterError",
    "TrafficRouter",
    "WeightDestination",
    "header_route_from_argo",
    "validate_weights",
]

MAX_WEIGHT = 100


class RouterError(Exception):
    """A router could not do what it was asked; the message says what and why."""


@dataclass(frozen=True)
class Endpoint:
    """One pod behind a Service: where it listens and which ReplicaSet it belongs to."""

    host: str
    port: int
    pod_template_hash: str
    ready: bool = True


@dataclass(frozen=True)
class Destination:
    """A Service (stable, canary or an additional one) and the endpoints it selects."""

    service: str
    endpoints: tuple[Endpoint, ...] = ()

    @property
    def ready_endpoints(self) -> tuple[Endpoint, ...]:
        return tuple(e for e in self.endpoints if e.ready)


@dataclass(frozen=True)
class WeightDestination:
    """An extra destination and its share, as in Argo's `additionalDestinations`."""

    service: str
    weight: int
    pod_template_hash: str = ""


class MatchKind(Enum):
    EXACT = "exact"
    PREFIX = "prefix"
    REGEX = "regex"


@dataclass(frozen=True)
class HeaderMatch:
    """One header condition, like Argo's `headerName` + `headerValue.{exact,prefix,regex}`."""

    header: str
    value: str
    kind: MatchKind = MatchKind.EXACT

    def __post_init__(self) -> None:
        if not self.header:
            raise RouterError("header match: `headerName` must not be empty")
        if self.kind is MatchKind.REGEX:
            try:
                re.compile(self.value)
            except re.error as error:
                raise RouterError(
                    f"header match on {self.header!r}: invalid regex {self.value!r}: {error}"
                ) from error

    def matches(self, value: str | None) -> bool:
        if value is None:
            return False
        if self.kind is MatchKind.EXACT:
            return value == self.value
        if self.kind is MatchKind.PREFIX:
            return value.startswith(self.value)
        return re.search(self.value, value) is not None


@dataclass(frozen=True)
class HeaderRoute:
    """A named route sending matching requests to the canary (Argo's `setHeaderRoute`).

    A request matches when any of `matches` holds. A route with no matches removes the
    route of that name, as an Argo `setHeaderRoute` step without `match` does.
    """

    name: str
    matches: tuple[HeaderMatch, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.name:
            raise RouterError("header route: `name` must not be empty")


METHOD = ":method"  # the request line's method, as Envoy names it
PATH = ":path"  # the request line's target


@dataclass(frozen=True)
class RequestMatch:
    """One Istio `HTTPMatchRequest`: every condition holds. A condition on `:method` or
    `:path` reads the request line (an exact or regex path ignores the query string, a prefix
    sees it, as Envoy does); any other name is a header. No conditions match every request."""

    conditions: tuple[HeaderMatch, ...] = ()

    def matches(self, value_of: Callable[[str], str | None]) -> bool:
        for condition in self.conditions:
            value = value_of(condition.header)
            strip_query = condition.header == PATH and condition.kind is not MatchKind.PREFIX
            if strip_query and value is not None:
                value = value.split("?", 1)[0]
            if not condition.matches(value):
                return False
        return True


@dataclass(frozen=True)
class MirrorRoute:
    """A named route that serves matching requests by the split and copies `percentage`
    percent of them to the canary, the answer discarded (Istio's `mirror`). A request matches
    when any of `matches` does; a route with no matches removes the route of that name."""

    name: str
    matches: tuple[RequestMatch, ...] = ()
    percentage: float = 100.0

    def __post_init__(self) -> None:
        if not self.name:
            raise RouterError("mirror route: `name` must not be empty")
        if not 0 <= self.percentage <= MAX_WEIGHT:
            raise RouterError(f"mirror route {self.name!r}: percentage must be within 0..100")


def header_route_from_argo(name: str, match: Sequence[Mapping[str, Any]]) -> HeaderRoute:
    """A route from Argo's `setHeaderRoute` fields: `match[].headerName`, `.headerValue`.

    `headerValue` holds exactly one of `exact`, `prefix`, `regex`. An empty `match` gives a
    route with no matches, which removes the route of that name.
    """
    matches = []
    for index, entry in enumerate(match):
        where = f"setHeaderRoute {name!r} match[{index}]"
        header, value = entry.get("headerName"), entry.get("headerValue")
        if not isinstance(header, str) or not isinstance(value, Mapping):
            raise RouterError(f"{where}: needs `headerName` and a `headerValue` mapping")
        kinds = [k for k in MatchKind if k.value in value]
        if len(kinds) != 1 or not isinstance(value[kinds[0].value], str):
            raise RouterError(
                f"{where}.headerValue: needs exactly one of exact, prefix, regex as a string"
            )
        matches.append(HeaderMatch(header, value[kinds[0].value], kinds[0]))
    return HeaderRoute(name, tuple(matches))


def validate_weights(weight: int, additional: Sequence[WeightDestination]) -> int:
    """The stable share left after the canary and additional weights; raises when invalid."""
    shares = [weight, *(d.weight for d in additional)]
    if any(share < 0 or share > MAX_WEIGHT for share in shares):
        raise RouterError(f"weights must be within 0..{MAX_WEIGHT}, got {shares}")
    if sum(shares) > MAX_WEIGHT:
        raise RouterError(f"canary and additional weights add up to {sum(shares)} > 100")
    return MAX_WEIGHT - sum(shares)


class TrafficRouter(Protocol):
    """Splits one Service's traffic between its stable and canary versions."""

    @property
    def type_name(self) -> str:
        """A short name of the implementation, e.g. "embedded" or "haproxy"."""
        ...

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) clients send traffic to; valid after `start()`."""
        ...

    @property
    def metrics_address(self) -> tuple[str, int]:
        """The (host, port) serving `/metrics`; valid after `start()`."""
        ...

    async def start(self) -> None:
        """Begin listening; all traffic goes to stable until told otherwise."""
        ...

    async def close(self) -> None:
        """Stop listening and release every process, socket and file the router owns."""
        ...

    async def update_destinations(
        self,
        *,
        stable: Destination,
        canary: Destination,
        additional: Sequence[Destination] = (),
    ) -> None:
        """Replace the endpoints behind each destination (Argo's `UpdateHash`, with pods)."""
        ...

    async def set_weight(self, weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        """Send `weight`% to canary, each additional its weight, and the rest to stable."""
        ...

    async def set_header_route(self, route: HeaderRoute) -> None:
        """Create or replace a named header route; no matches removes it."""
        ...

    async def set_mirror_route(self, route: MirrorRoute) -> None:
        """Create or replace a named mirror route; no matches removes it. A router that
        cannot mirror raises `RouterError` for a route with matches."""
        ...

    async def verify_weight(
        self, weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        """Whether the data plane applies exactly these weights; None if it cannot tell."""
        ...

    async def remove_managed_routes(self) -> None:
        """Delete every header and mirror route this router created."""
        ...

    async def metrics_snapshot(self) -> MetricsSnapshot:
        """Request counts and latency histograms per pod-template hash, right now."""
        ...
