"""What a VirtualService asks the local mesh for: a pure reading of its `spec.http`.

Purely computational, no side effects. Istio evaluates `spec.http[]` in order and the first
route whose `match` holds wins; a route without `match` takes everything left. So the local
mesh realizes, in order:

* routes with `match[].headers.NAME.{exact,prefix,regex}` before the first unmatched route:
  header routes (any match entry suffices) to their one destination;
* the first route without `match`: the weighted split between its destinations;
* routes after it: never reached in Istio either, so ignored (and said so);
* routes with a `mirror` (Argo's `setMirrorRoute` writes them above the split, with the split
  copied as their `route`): mirror rules. A request matching one (any `match` entry, all of
  the entry's `method`, `uri` and `headers`; a mirror on the split route itself takes every
  request) is served by the split and `mirrorPercentage` percent of such requests (100 when
  unset) are copied to the mirror's destination, which must be the split's canary (or, with a
  one-destination split, becomes the canary at weight 0). A mirror route whose `route`
  differs from the split is still served by the split, and said so.

Which destination is "stable" and which "canary" follows the Rollout that names this
VirtualService (its `stableService` / `canaryService`) when one is given, else their order in
the split route. A header route may target the canary only: the data-plane routers send
matching requests to their canary. When the split has one destination, a header route's
Service becomes the canary at weight 0.

What the local mesh cannot realize is listed in `MeshPlan.unsupported` (a route matching on
the URI, say) or, when nothing sensible could be realized, raised as `MeshPlanError` naming
the field.

A destination with a `subset` is that subset of its host: the local mesh routes it to the
host Service's ready Pods that also carry the subset's labels in the DestinationRule for that
host (`MeshWorld.endpoints`), so a Rollout's subset-level split follows the
`rollouts-pod-template-hash` the Rollout controller writes there. With subsets, the roles
are the Rollout's `stableSubsetName` / `canarySubsetName`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "HeaderCondition",
    "HeaderRule",
    "MeshPlan",
    "MeshPlanError",
    "MirrorRule",
    "ServiceRef",
    "Share",
    "assemble_plan",
    "parse_host",
    "plan_virtual_service",
    "split_shares",
]

MATCH_KINDS = ("exact", "prefix", "regex")
CLUSTER_SUFFIXES = ("svc", "svc.cluster.local")


class MeshPlanError(Exception):
    """The VirtualService cannot be realized; the message starts with the field path."""


@dataclass(frozen=True, order=True)
class ServiceRef:
    """A destination Service: `host` as written resolved against the VirtualService, and the
    DestinationRule subset of it when one is named."""

    name: str
    namespace: str
    subset: str = ""


@dataclass(frozen=True)
class Share:
    service: ServiceRef
    weight: int


@dataclass(frozen=True)
class HeaderCondition:
    header: str
    value: str
    kind: str  # one of MATCH_KINDS


@dataclass(frozen=True)
class HeaderRule:
    """Requests matching any condition go to `service` (which is the plan's canary)."""

    name: str
    conditions: tuple[HeaderCondition, ...]
    service: ServiceRef


@dataclass(frozen=True)
class MirrorRule:
    """Requests matching any entry of `matches` (all conditions of the entry; `:method` and
    `:path` name the request line) are served by the split, and `percentage` percent of them
    are copied to the canary. An empty entry matches every request."""

    name: str
    matches: tuple[tuple[HeaderCondition, ...], ...]
    percentage: float


@dataclass(frozen=True)
class MeshPlan:
    stable: ServiceRef
    canary: ServiceRef | None
    canary_weight: int
    additional: tuple[Share, ...]
    header_rules: tuple[HeaderRule, ...]
    unsupported: tuple[str, ...]
    mirror_rules: tuple[MirrorRule, ...] = ()

    @property
    def stable_weight(self) -> int:
        return 100 - self.canary_weight - sum(s.weight for s in self.additional)

    def services(self) -> tuple[ServiceRef, ...]:
        canary = () if self.canary is None else (self.canary,)
        return (self.stable, *canary, *(s.service for s in self.additional))


def parse_host(host: Any, namespace: str, where: str) -> ServiceRef:
    """`svc`, `svc.ns`, `svc.ns.svc` or `svc.ns.svc.cluster.local` -> the Service."""
    if not isinstance(host, str) or not host:
        raise MeshPlanError(f"{where}.host: required string")
    parts = host.split(".")
    if "*" in host or any(not p for p in parts):
        raise MeshPlanError(f"{where}.host: {host!r} is not a Service name")
    if len(parts) == 1:
        return ServiceRef(parts[0], namespace)
    if len(parts) == 2 or ".".join(parts[2:]) in CLUSTER_SUFFIXES:
        return ServiceRef(parts[0], parts[1])
    raise MeshPlanError(
        f"{where}.host: {host!r} is not a Service of this runtime "
        "(use NAME, NAME.NAMESPACE or NAME.NAMESPACE.svc.cluster.local)"
    )


def split_shares(weights: list[int]) -> list[int]:
    """Integer percentages in proportion to `weights`, summing to 100 (largest remainder)."""
    total = sum(weights)
    exact = [w * 100 / total for w in weights]
    shares = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (shares[i] - exact[i], i))
    for index in by_remainder[: 100 - sum(shares)]:
        shares[index] += 1
    return shares


def _weight(raw: Mapping[str, Any], where: str, default: int) -> int:
    value = raw.get("weight", default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise MeshPlanError(f"{where}.weight: must be an integer within 0..100, not {value!r}")
    return value


def _destinations(
    route: Mapping[str, Any], namespace: str, where: str
) -> list[tuple[ServiceRef, int]]:
    raw = route.get("route")
    if not isinstance(raw, list) or not raw:
        raise MeshPlanError(f"{where}.route: at least one destination is required")
    found: list[tuple[ServiceRef, int]] = []
    for index, item in enumerate(raw):
        at = f"{where}.route[{index}]"
        target = item.get("destination") if isinstance(item, dict) else None
        if not isinstance(target, dict):
            raise MeshPlanError(f"{at}.destination: required mapping")
        ref = parse_host(target.get("host"), namespace, f"{at}.destination")
        subset = target.get("subset")
        if subset is not None and (not isinstance(subset, str) or not subset):
            raise MeshPlanError(f"{at}.destination.subset: must be a non-empty string")
        ref = ServiceRef(ref.name, ref.namespace, subset or "")
        if any(ref == seen for seen, _ in found):
            what = f"{ref.name} subset {ref.subset}" if ref.subset else ref.name
            raise MeshPlanError(f"{at}.destination.host: {what} is listed twice")
        found.append((ref, _weight(item, at, 100 if len(raw) == 1 else 0)))
    return found


def _conditions(route: Mapping[str, Any], where: str) -> tuple[tuple[HeaderCondition, ...], str]:
    """The route's header conditions, or () and why the route cannot be realized."""
    conditions: list[HeaderCondition] = []
    for index, entry in enumerate(route.get("match") or []):
        at = f"{where}.match[{index}]"
        if not isinstance(entry, dict):
            return (), f"{at}: not a mapping"
        other = sorted(set(entry) - {"headers", "name"})
        if other:
            return (), f"{at}: matching on {', '.join(other)} is not implemented"
        headers = entry.get("headers")
        if not isinstance(headers, dict) or len(headers) != 1:
            return (), f"{at}.headers: exactly one header per match entry is implemented"
        (header, spec), = headers.items()
        kinds = [k for k in MATCH_KINDS if isinstance(spec, dict) and k in spec]
        if len(kinds) != 1 or len(spec) != 1:
            return (), f"{at}.headers.{header}: needs exactly one of exact, prefix, regex"
        conditions.append(HeaderCondition(str(header).lower(), str(spec[kinds[0]]), kinds[0]))
    return tuple(conditions), ""


def _roles(
    found: list[tuple[ServiceRef, int]], roles: tuple[str, str] | None
) -> list[tuple[ServiceRef, int]]:
    """The split's destinations ordered stable, canary, additional."""
    if roles is None:
        return found
    ranked = {roles[0]: 0, roles[1]: 1}
    return sorted(found, key=lambda item: ranked.get(item[0].subset or item[0].name, 2))


def plan_virtual_service(vs: Mapping[str, Any], *, roles: tuple[str, str] | None) -> MeshPlan:
    """The traffic split and header routes the local mesh realizes for `vs`."""
    namespace = str((vs.get("metadata") or {}).get("namespace") or "default")
    http = (vs.get("spec") or {}).get("http")
    if not isinstance(http, list) or not http:
        raise MeshPlanError("spec.http: at least one HTTP route is required")
    unsupported: list[str] = []
    header_routes: list[tuple[str, tuple[HeaderCondition, ...], ServiceRef]] = []
    mirrors: list[_Mirror] = []
    split: list[tuple[ServiceRef, int]] | None = None
    for index, route in enumerate(http):
        where = f"spec.http[{index}]"
        if not isinstance(route, dict):
            raise MeshPlanError(f"{where}: must be a mapping")
        if split is not None:
            unsupported.append(f"{where}: after the catch-all route, never reached")
            continue
        if route.get("mirror") is not None:
            mirror, problem = _mirror(route, namespace, where)
            unsupported.extend([problem] if problem else [])
            mirrors.extend([mirror] if mirror else [])
        if not route.get("match"):
            split = _roles(_destinations(route, namespace, where), roles)
            continue
        if route.get("mirror") is not None:
            continue  # served by the split (its `route` copies it), checked below
        conditions, problem = _conditions(route, where)
        targets = _destinations(route, namespace, where)
        if problem or len(targets) != 1:
            unsupported.append(problem or f"{where}.route: a header route needs one destination")
            continue
        header_routes.append((str(route.get("name") or where), conditions, targets[0][0]))
        if mirrors:
            unsupported.append(
                f"{where}: below a mirror route; a request matching both is header-routed "
                "(the local mesh tries header routes first)"
            )
    if split is None:
        raise MeshPlanError("spec.http: no route without `match` (the weighted split) found")
    return with_mirrors(assemble_plan(split, header_routes, unsupported), mirrors, split)


@dataclass(frozen=True)
class _Mirror:
    rule: MirrorRule
    target: ServiceRef
    route: tuple[tuple[ServiceRef, int], ...]  # the route's own destinations; () for the split
    where: str


def _string_condition(field: str, spec: Any, at: str) -> tuple[HeaderCondition | None, str]:
    kinds = [k for k in MATCH_KINDS if isinstance(spec, dict) and k in spec]
    if len(kinds) != 1 or len(spec) != 1:
        return None, f"{at}: needs exactly one of exact, prefix, regex"
    return HeaderCondition(field, str(spec[kinds[0]]), kinds[0]), ""


def _match_entry(entry: Any, at: str) -> tuple[tuple[HeaderCondition, ...], str]:
    """One HTTPMatchRequest's `method`, `uri` and `headers`, all of which must hold."""
    if not isinstance(entry, dict):
        return (), f"{at}: not a mapping"
    other = sorted(set(entry) - {"headers", "method", "uri", "name"})
    if other:
        return (), f"{at}: matching on {', '.join(other)} is not implemented"
    fields = [(":method", entry["method"], f"{at}.method")] if "method" in entry else []
    fields += [(":path", entry["uri"], f"{at}.uri")] if "uri" in entry else []
    headers = entry.get("headers") or {}
    if not isinstance(headers, dict):
        return (), f"{at}.headers: must be a mapping"
    fields += [(str(k).lower(), v, f"{at}.headers.{k}") for k, v in headers.items()]
    conditions = []
    for field, spec, where in fields:
        condition, problem = _string_condition(field, spec, where)
        if condition is None:
            return (), problem
        conditions.append(condition)
    return tuple(conditions), ""


def _mirror(
    route: Mapping[str, Any], namespace: str, where: str
) -> tuple[_Mirror | None, str]:
    """The mirror rule of a route with `mirror`, or None and why it cannot be realized."""
    target = route.get("mirror")
    if not isinstance(target, dict):
        return None, f"{where}.mirror: must be a mapping"
    ref = parse_host(target.get("host"), namespace, f"{where}.mirror")
    ref = ServiceRef(ref.name, ref.namespace, str(target.get("subset") or ""))
    value = (route.get("mirrorPercentage") or {}).get("value", 100)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        return None, f"{where}.mirrorPercentage.value: must be a number within 0..100"
    entries = []
    for index, entry in enumerate(route.get("match") or [{}]):
        conditions, problem = _match_entry(entry, f"{where}.match[{index}]")
        if problem:
            return None, problem
        entries.append(conditions)
    name = str(route.get("name") or where)
    own = tuple(_destinations(route, namespace, where)) if route.get("match") else ()
    return _Mirror(MirrorRule(name, tuple(entries), float(value)), ref, own, where), ""


def with_mirrors(
    plan: MeshPlan, mirrors: list[_Mirror], split: list[tuple[ServiceRef, int]]
) -> MeshPlan:
    """`plan` with the mirror rules it can realize; the others listed as unsupported."""
    canary = plan.canary
    if canary is None:  # a one-destination split: the mirror's Service becomes the canary
        canary = next((m.target for m in mirrors if m.target != plan.stable), None)
    unsupported, rules = list(plan.unsupported), []
    for mirror in mirrors:
        if mirror.target != canary:
            unsupported.append(
                f"{mirror.where}.mirror: mirrors to {mirror.target.name}; the local mesh "
                f"mirrors only to the split's canary ({canary.name if canary else 'none'})"
            )
            continue
        if mirror.route and sorted(mirror.route) != sorted(split):
            unsupported.append(
                f"{mirror.where}.route: differs from the split; its requests are served "
                "by the split"
            )
        rules.append(mirror.rule)
    return replace(
        plan, canary=canary, mirror_rules=tuple(rules), unsupported=tuple(unsupported)
    )


def assemble_plan(
    split: list[tuple[ServiceRef, int]],
    header_routes: list[tuple[str, tuple[HeaderCondition, ...], ServiceRef]],
    unsupported: list[str],
) -> MeshPlan:
    """The plan of a split (stable first, then canary, then additional destinations) and
    header routes to the canary; shared by every router object the mesh realizes."""
    weights = [w for _, w in split]
    if sum(weights) == 0:
        raise MeshPlanError("spec.http: the split route's weights add up to 0")
    if sum(weights) != 100:
        unsupported.append(f"split weights add up to {sum(weights)}, not 100: scaled to 100")
    shares = split_shares(weights)
    stable = split[0][0]
    canary = split[1][0] if len(split) > 1 else None
    if canary is None:
        canary = next((ref for _, _, ref in header_routes if ref != stable), None)
    rules: list[HeaderRule] = []
    for name, conditions, ref in header_routes:
        if ref != canary:
            unsupported.append(
                f"header route {name!r} targets {ref.name}; the local mesh sends header "
                f"routes only to the canary ({canary.name if canary else 'none'})"
            )
            continue
        rules.append(HeaderRule(name, conditions, ref))
    return MeshPlan(
        stable=stable,
        canary=canary,
        canary_weight=shares[1] if len(split) > 1 else 0,
        additional=tuple(
            Share(ref, share) for (ref, _), share in zip(split[2:], shares[2:], strict=True)
        ),
        header_rules=tuple(rules),
        unsupported=tuple(unsupported),
    )
