"""What an Istio Gateway asks the local mesh for: a pure reading of the Gateway and of the
VirtualServices bound to it.

Purely computational, no side effects. In Istio a Gateway is the mesh's edge listener: its
`servers[]` say which ports, protocols and hosts it accepts, and a VirtualService that names
it in `spec.gateways` (`NAME` in the VirtualService's namespace, or `NAMESPACE/NAME`) routes
the requests whose Host is one of the VirtualService's `hosts`. The local mesh realizes that
as one HTTP listener per Gateway that picks, by the request's Host header, the bound
VirtualService and hands the request to that VirtualService's own router (which splits it
as usual). Host patterns follow Istio: exact names, `*.suffix` wildcards and `*`; the most
specific pattern wins (exact, then the longest wildcard, then `*`).

Not realized, and listed in `GatewayPlan.unsupported`: servers that are not plain HTTP (TLS
needs certificates the local runtime does not have), the server ports themselves (the
listener's address is what clients use), `selector`, and VirtualService hosts that no HTTP
server of the Gateway accepts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GatewayPlan", "GatewayRoute", "choose_route", "host_matches", "plan_gateway"]

HTTP_PROTOCOLS = ("HTTP", "HTTP2")


@dataclass(frozen=True)
class GatewayRoute:
    """Requests whose Host matches `pattern` go to the router of `virtual_service`."""

    pattern: str
    virtual_service: str  # NAMESPACE/NAME
    host: str
    port: int


@dataclass(frozen=True)
class GatewayPlan:
    routes: tuple[GatewayRoute, ...]
    unsupported: tuple[str, ...] = ()
    accepted_hosts: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()  # bound VirtualServices whose router does not run yet


def host_matches(pattern: str, host: str) -> bool:
    """Whether `host` (no port, lower case) falls under `pattern`."""
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return pattern == host


def _specificity(pattern: str) -> tuple[int, int]:
    if pattern == "*":
        return 0, 0
    if pattern.startswith("*"):
        return 1, len(pattern)
    return 2, len(pattern)


def choose_route(routes: Sequence[GatewayRoute], host_header: str | None) -> GatewayRoute | None:
    """The route for a request's Host header (its port dropped), most specific first."""
    host = (host_header or "").strip().lower()
    if host.startswith("["):  # an IPv6 literal keeps its colons
        host = host.partition("]")[0] + "]"
    else:
        host = host.rpartition(":")[0] if ":" in host else host
    found = [r for r in routes if host_matches(r.pattern, host)]
    return max(found, key=lambda r: _specificity(r.pattern)) if found else None


def _overlap(a: str, b: str) -> bool:
    """Whether two host patterns can match one host."""
    if a == "*" or b == "*":
        return True
    a_wild, b_wild = a.startswith("*."), b.startswith("*.")
    if a_wild and b_wild:
        return a[1:].endswith(b[1:]) or b[1:].endswith(a[1:])
    if a_wild or b_wild:
        return host_matches(a, b) if a_wild else host_matches(b, a)
    return a == b


def _server_hosts(gateway: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Hosts the Gateway's HTTP servers accept (`namespace/` prefixes dropped), and what
    about its servers is not realized."""
    hosts: list[str] = []
    unsupported = []
    for index, server in enumerate((gateway.get("spec") or {}).get("servers") or []):
        if not isinstance(server, Mapping):
            continue
        port = server.get("port") or {}
        protocol = str(port.get("protocol") or "HTTP").upper()
        if protocol not in HTTP_PROTOCOLS or server.get("tls"):
            unsupported.append(f"spec.servers[{index}]: {protocol} (TLS) is not served: no "
                               "certificates locally; only plain HTTP servers are realized")
            continue
        hosts.extend(str(raw).rpartition("/")[2].lower() for raw in server.get("hosts") or [])
    return hosts, unsupported


def _binds(vs: Mapping[str, Any], namespace: str, name: str) -> bool:
    meta = vs.get("metadata") or {}
    own = str(meta.get("namespace") or "default")
    for ref in (vs.get("spec") or {}).get("gateways") or []:
        ref_ns, _, ref_name = str(ref).rpartition("/")
        if ref_name == name and (ref_ns or own) == namespace:
            return True
    return False


def plan_gateway(
    gateway: Mapping[str, Any],
    virtual_services: Iterable[Mapping[str, Any]],
    *,
    addresses: Mapping[str, tuple[str, int]],
) -> GatewayPlan:
    """The routes of `gateway`: for each VirtualService bound to it whose router runs
    (`addresses`, by NAMESPACE/NAME), one route per host its HTTP servers accept."""
    meta = gateway.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
    accepted, unsupported = _server_hosts(gateway)
    routes, waiting = [], []
    for vs in virtual_services:
        if not _binds(vs, namespace, name):
            continue
        vs_meta = vs.get("metadata") or {}
        key = f"{vs_meta.get('namespace') or 'default'}/{vs_meta.get('name')}"
        address = addresses.get(key)
        if address is None:
            waiting.append(key)
            continue
        for raw in (vs.get("spec") or {}).get("hosts") or ["*"]:
            host = str(raw).lower()
            # The hosts both accept: per overlapping pair, the narrower pattern.
            narrower = {max(host, a, key=_specificity) for a in accepted if _overlap(host, a)}
            patterns = sorted(narrower)
            if not patterns:
                unsupported.append(f"VirtualService {key}: host {host} is not accepted by "
                                   "any plain HTTP server of this Gateway")
            routes += [GatewayRoute(p, key, address[0], address[1]) for p in patterns]
    return GatewayPlan(tuple(routes), tuple(unsupported), tuple(accepted), tuple(waiting))
