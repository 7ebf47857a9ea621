"""Which Service an Ingress sends a request to: a pure reading of `networking.k8s.io/v1`.

Purely computational. Kubernetes' matching rules, as ingress controllers share them:
  * a rule's `host` is exact, or `*.suffix`, which matches exactly one more DNS label
    (`*.shop.test` matches `a.shop.test`, not `shop.test` nor `a.b.shop.test`); a rule
    without a host matches every host; an exact host beats a wildcard;
  * `pathType: Exact` matches the path exactly; `Prefix` (and `ImplementationSpecific`,
    read as Prefix) matches element by element (`/api` matches `/api`, `/api/` and `/api/v1`,
    not `/apis`); the longest matching path wins, and Exact beats Prefix of the same length;
  * nothing matching: `spec.defaultBackend`, else no backend (the listener answers 404).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Backend", "IngressRoute", "choose_backend", "ingress_routes"]


@dataclass(frozen=True)
class Backend:
    service: str
    port: int | str  # the Service port's number or name


@dataclass(frozen=True)
class IngressRoute:
    host: str  # "" for any host
    path: str
    exact: bool
    backend: Backend


def _backend(raw: Any) -> Backend | None:
    service = (raw or {}).get("service") if isinstance(raw, Mapping) else None
    if not isinstance(service, Mapping) or not service.get("name"):
        return None
    port = service.get("port") or {}
    number, name = port.get("number"), port.get("name")
    return Backend(str(service["name"]), number if isinstance(number, int) else str(name or ""))


def ingress_routes(ingress: Mapping[str, Any]) -> tuple[tuple[IngressRoute, ...], Backend | None]:
    """(the routes of every rule, the default backend)."""
    spec = ingress.get("spec") or {}
    routes: list[IngressRoute] = []
    for rule in spec.get("rules") or []:
        host = str(rule.get("host") or "").lower()
        for path in (rule.get("http") or {}).get("paths") or []:
            backend = _backend(path.get("backend"))
            if backend is not None:
                routes.append(IngressRoute(host, str(path.get("path") or "/"),
                                           path.get("pathType") == "Exact", backend))
    return tuple(routes), _backend(spec.get("defaultBackend"))


def _host_rank(pattern: str, host: str) -> int | None:
    """2 exact, 1 wildcard, 0 any host; None when it does not match."""
    if not pattern:
        return 0
    if pattern.startswith("*."):
        head, _, rest = host.partition(".")
        return 1 if head and rest == pattern[2:] else None
    return 2 if pattern == host else None


def _path_matches(route: IngressRoute, path: str) -> bool:
    if route.exact:
        return path == route.path
    prefix = route.path.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def choose_backend(
    routes: Sequence[IngressRoute], default: Backend | None, *, host: str, path: str
) -> Backend | None:
    host = host.lower().partition(":")[0]
    path = path.partition("?")[0] or "/"
    best: tuple[int, int, int] | None = None
    chosen = None
    for route in routes:
        rank = _host_rank(route.host, host)
        if rank is None or not _path_matches(route, path):
            continue
        key = (rank, len(route.path.rstrip("/")), int(route.exact))
        if best is None or key > best:
            best, chosen = key, route.backend
    return chosen or default
