"""What the API gateways' objects ask the local mesh for: Ambassador Mappings, APISIX routes.

Purely computational, like `router_objects.py`: each function reads the objects a Rollout
routes through and returns the `MeshPlan` a data-plane router realizes, or raises
`MeshPlanError` whose message starts with the field path.

* Ambassador `Mapping`: the base Mapping's `spec.service` is the stable; the Mapping
  `<base>-canary` the Rollout writes beside it, when present, is the canary at its
  `spec.weight` (Ambassador gives a weighted Mapping its weight and the rest of the prefix's
  traffic to the unweighted one). `service` may be `name`, `name.namespace`, with a
  `scheme://` and a `:port` (the port is the Service's, which the mesh reaches through its
  endpoints).
* APISIX `ApisixRoute`: the rule named `rules[0]` (default: the route's name) is the split of
  its `backends[].{serviceName, weight}` (weight 100 when omitted, APISIX's default); each
  managed ApisixRoute the Rollout wrote for a `setHeaderRoute` is a header route when its
  rule of that name has one `match.exprs` entry on a header (`Equal` or `RegexMatch`) and one
  backend, the canary.

Paths, hosts, methods, `prefix`, `rewrite` and the like are not matched: the router serves
every request sent to its address. A second rule or Mapping is listed in
`MeshPlan.unsupported`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.local.mesh.plan import (
    HeaderCondition,
    MeshPlan,
    MeshPlanError,
    ServiceRef,
    assemble_plan,
    parse_host,
)

__all__ = ["mapping_service", "plan_ambassador_mapping", "plan_apisix_route"]

_Split = list[tuple[ServiceRef, int]]
_HeaderRoutes = list[tuple[str, tuple[HeaderCondition, ...], ServiceRef]]
_APISIX_OPS = {"Equal": "exact", "RegexMatch": "regex"}
_APISIX_DEFAULT_WEIGHT = 100


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _weight(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise MeshPlanError(f"{where}: must be an integer within 0..100, not {value!r}")
    return value


def _ordered(split: _Split, roles: tuple[str, str] | None) -> _Split:
    if roles is None:
        return split
    ranked = {roles[0]: 0, roles[1]: 1}
    return sorted(split, key=lambda item: ranked.get(item[0].name, 2))


# ---- Ambassador Mapping ---------------------------------------------------------------------


def mapping_service(obj: Mapping[str, Any], where: str = "") -> ServiceRef:
    """The Service of a Mapping's `spec.service` (`[scheme://]name[.namespace][:port]`)."""
    raw = (obj.get("spec") or {}).get("service")
    if not isinstance(raw, str) or not raw:
        raise MeshPlanError(f"{where}spec.service: required string")
    host = raw.partition("://")[2] if "://" in raw else raw
    host = host.rpartition(":")[0] if ":" in host else host
    return parse_host(host, _namespace(obj), f"{where}spec.service")


def plan_ambassador_mapping(base: Mapping[str, Any], canary: Mapping[str, Any] | None) -> MeshPlan:
    """The split between a base Mapping and the canary Mapping beside it (if any)."""
    stable = mapping_service(base)
    if canary is None:
        return assemble_plan([(stable, 100)], [], [])
    name = str(canary["metadata"]["name"])
    where = f"Mapping {name} "
    weight = _weight((canary.get("spec") or {}).get("weight", 0), f"{where}spec.weight")
    split = [(stable, 100 - weight), (mapping_service(canary, where), weight)]
    if weight == 0:
        split = [(stable, 100), split[1]]
    return assemble_plan(split, [], [])


# ---- APISIX ApisixRoute ---------------------------------------------------------------------


def _apisix_rule(route: Mapping[str, Any], rule_name: str, where: str) -> Mapping[str, Any]:
    rules = (route.get("spec") or {}).get("http")
    if not isinstance(rules, list):
        raise MeshPlanError(f"{where}spec.http: required list")
    for rule in rules:
        if isinstance(rule, Mapping) and rule.get("name") == rule_name:
            return rule
    raise MeshPlanError(f"{where}spec.http: no rule named {rule_name!r}")


def _apisix_backends(rule: Mapping[str, Any], namespace: str, where: str) -> _Split:
    backends = rule.get("backends")
    if not isinstance(backends, list) or not backends:
        raise MeshPlanError(f"{where}.backends: at least one backend is required")
    split: _Split = []
    for index, backend in enumerate(backends):
        at = f"{where}.backends[{index}]"
        name = backend.get("serviceName") if isinstance(backend, Mapping) else None
        if not isinstance(name, str) or not name:
            raise MeshPlanError(f"{at}.serviceName: required string")
        weight = _weight(backend.get("weight", _APISIX_DEFAULT_WEIGHT), f"{at}.weight")
        split.append((ServiceRef(name, namespace), weight))
    return split


def _apisix_header(rule: Mapping[str, Any], where: str) -> HeaderCondition:
    exprs = (rule.get("match") or {}).get("exprs") if isinstance(rule, Mapping) else None
    if not isinstance(exprs, list) or len(exprs) != 1 or not isinstance(exprs[0], Mapping):
        raise MeshPlanError(f"{where}.match.exprs: exactly one expression is realized")
    expr = exprs[0]
    subject = expr.get("subject")
    subject = subject if isinstance(subject, Mapping) else {}
    kind = _APISIX_OPS.get(str(expr.get("op")))
    if subject.get("scope") != "Header" or not subject.get("name") or kind is None:
        raise MeshPlanError(
            f"{where}.match.exprs[0]: needs subject.scope Header, a name and op Equal or RegexMatch"
        )
    return HeaderCondition(str(subject["name"]).lower(), str(expr.get("value", "")), kind)


def plan_apisix_route(
    route: Mapping[str, Any],
    *,
    rule_names: Sequence[str],
    header_routes: Sequence[Mapping[str, Any]],
    roles: tuple[str, str] | None,
) -> MeshPlan:
    """The split of the route's first named rule, and a header route for each managed
    ApisixRoute in `header_routes` (a copy of the route the Rollout wrote for a step)."""
    namespace = _namespace(route)
    first = rule_names[0]
    split = _ordered(
        _apisix_backends(_apisix_rule(route, first, ""), namespace, f"spec.http[{first}]"), roles
    )
    unsupported = [f"spec.http[{name}]: only the first rule is realized" for name in rule_names[1:]]
    routes: _HeaderRoutes = []
    for managed in header_routes:
        name = str(managed["metadata"]["name"])
        where = f"ApisixRoute {name} spec.http[{first}]"
        try:
            rule = _apisix_rule(managed, first, f"ApisixRoute {name} ")
            targets = _apisix_backends(rule, namespace, where)
            if len(targets) != 1:
                raise MeshPlanError(f"{where}.backends: a header route needs one backend")
            routes.append((name, (_apisix_header(rule, where),), targets[0][0]))
        except MeshPlanError as err:
            unsupported.append(str(err))
    return assemble_plan(split, routes, unsupported)
