"""What the other routers' objects ask the local mesh for: SMI, Traefik, Gateway API, ALB, NGINX.

Purely computational, like `plan.py` for VirtualServices: each function reads one object (an
NGINX stable Ingress also its canary Ingresses) and returns the `MeshPlan` a data-plane router
realizes, or raises `MeshPlanError` whose message starts with the field path. Which Service is
stable and which canary follows the Rollout that routes through the object (`roles`), else
the order written. What the mesh cannot realize is listed in `MeshPlan.unsupported`.

* SMI `TrafficSplit`: `spec.backends[].{service, weight}` (a weight may be a quantity string);
* Traefik `TraefikService`: `spec.weighted.services[].{name, weight}` (weight defaults to 1);
* Gateway API `HTTPRoute`: the first rule without `matches` (or matching only the path prefix
  `/`) is the split of its `backendRefs`; earlier rules matching one header each
  (`matches[].headers[{type: Exact|RegularExpression, name, value}]`) are header routes;
* ALB `Ingress`: the JSON of `<prefix>/actions.<Service>` for a path whose backend is that
  Service (`port.name: use-annotation`): `ForwardConfig.TargetGroups[].{ServiceName, Weight}`;
  an action with a `<prefix>/conditions.<Service>` beside it is a header route (one
  `http-header` condition; a request carrying any of its `values` goes to the action's one
  target group), the first action without conditions is the split;
* NGINX `Ingress`: the stable Ingress's backend Service, and each Ingress annotated
  `<prefix>/canary: "true"` for the same host: its backend is the canary at `canary-weight`
  out of `canary-weight-total` (default 100); `canary-by-header` H sends `H: always` to it,
  with `canary-by-header-value` V only `H: V`, with `canary-by-header-pattern` P when H matches P.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.local.mesh.plan import (
    HeaderCondition,
    MeshPlan,
    MeshPlanError,
    ServiceRef,
    assemble_plan,
)

__all__ = [
    "NGINX_PREFIX",
    "alb_action_services",
    "is_nginx_canary",
    "plan_alb_ingress",
    "plan_http_route",
    "plan_nginx_ingress",
    "plan_traefik_service",
    "plan_traffic_split",
]

NGINX_PREFIX = "nginx.ingress.kubernetes.io"
_Split = list[tuple[ServiceRef, int]]
_HeaderRoutes = list[tuple[str, tuple[HeaderCondition, ...], ServiceRef]]


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _int_weight(value: Any, where: str) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MeshPlanError(f"{where}: must be a non-negative integer, not {value!r}")
    return value


def _ordered(split: _Split, roles: tuple[str, str] | None) -> _Split:
    if roles is None:
        return split
    ranked = {roles[0]: 0, roles[1]: 1}
    return sorted(split, key=lambda item: ranked.get(item[0].name, 2))


def _named_split(
    entries: Any,
    *,
    namespace: str,
    where: str,
    name_key: str,
    default_weight: int | None,
    weight_key: str = "weight",
) -> _Split:
    if not isinstance(entries, list) or not entries:
        raise MeshPlanError(f"{where}: at least one entry is required")
    split: _Split = []
    for index, entry in enumerate(entries):
        at = f"{where}[{index}]"
        name = entry.get(name_key) if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name:
            raise MeshPlanError(f"{at}.{name_key}: required string")
        raw = entry.get(weight_key, default_weight)
        split.append((ServiceRef(name, namespace), _int_weight(raw, f"{at}.{weight_key}")))
    return split


def plan_traffic_split(obj: Mapping[str, Any], *, roles: tuple[str, str] | None) -> MeshPlan:
    """The split an SMI TrafficSplit asks for."""
    backends = (obj.get("spec") or {}).get("backends")
    split = _named_split(
        backends,
        namespace=_namespace(obj),
        where="spec.backends",
        name_key="service",
        default_weight=None,
    )
    return assemble_plan(_ordered(split, roles), [], [])


def plan_traefik_service(obj: Mapping[str, Any], *, roles: tuple[str, str] | None) -> MeshPlan:
    """The split a weighted TraefikService asks for."""
    weighted = (obj.get("spec") or {}).get("weighted")
    if not isinstance(weighted, Mapping):
        raise MeshPlanError("spec.weighted: only a weighted TraefikService is realized")
    split = _named_split(
        weighted.get("services"),
        namespace=_namespace(obj),
        where="spec.weighted.services",
        name_key="name",
        default_weight=1,
    )
    unsupported = [
        f"spec.weighted.{k}: not implemented" for k in sorted(weighted) if k != "services"
    ]
    return assemble_plan(_ordered(split, roles), [], unsupported)


# ---- Gateway API HTTPRoute ----------------------------------------------------------------

_GATEWAY_MATCH_KINDS = {"Exact": "exact", "RegularExpression": "regex"}


def _catch_all(matches: Any) -> bool:
    if not matches:
        return True
    everything = {"path": {"type": "PathPrefix", "value": "/"}}
    return isinstance(matches, list) and all(m in ({}, everything) for m in matches)


def _http_conditions(matches: Any, where: str) -> tuple[tuple[HeaderCondition, ...], str]:
    conditions: list[HeaderCondition] = []
    for index, match in enumerate(matches if isinstance(matches, list) else []):
        at = f"{where}.matches[{index}]"
        headers = match.get("headers") if isinstance(match, Mapping) else None
        other = sorted(set(match) - {"headers"}) if isinstance(match, Mapping) else []
        if other == ["path"] and match["path"] == {"type": "PathPrefix", "value": "/"}:
            other = []  # every path: only the header decides
        if other or not isinstance(headers, list) or len(headers) != 1:
            return (), f"{at}: only one header per match entry is implemented"
        header = headers[0]
        kind = _GATEWAY_MATCH_KINDS.get(str(header.get("type", "Exact")))
        if kind is None or not header.get("name"):
            return (), f"{at}.headers[0]: needs a name and type Exact or RegularExpression"
        conditions.append(
            HeaderCondition(str(header["name"]).lower(), str(header.get("value", "")), kind)
        )
    return tuple(conditions), ""


def plan_http_route(obj: Mapping[str, Any], *, roles: tuple[str, str] | None) -> MeshPlan:
    """The split and header routes a Gateway API HTTPRoute asks for. A header-matching rule
    wins over a catch-all one wherever it is listed (Gateway API's precedence), so the
    plugin's header rules, appended after the user's, are realized."""
    namespace = _namespace(obj)
    rules = (obj.get("spec") or {}).get("rules")
    if not isinstance(rules, list) or not rules:
        raise MeshPlanError("spec.rules: at least one rule is required")
    unsupported: list[str] = []
    header_routes: _HeaderRoutes = []
    split: _Split | None = None
    for index, rule in enumerate(rules):
        where = f"spec.rules[{index}]"
        refs = rule.get("backendRefs") if isinstance(rule, Mapping) else None
        entries = _named_split(
            refs,
            namespace=namespace,
            where=f"{where}.backendRefs",
            name_key="name",
            default_weight=1,
        )
        if _catch_all(rule.get("matches")):
            if split is not None:
                unsupported.append(f"{where}: a second catch-all rule, never reached")
                continue
            split = _ordered(entries, roles)
            continue
        conditions, problem = _http_conditions(rule.get("matches"), where)
        if problem or len(entries) != 1:
            unsupported.append(problem or f"{where}.backendRefs: a header rule needs one backend")
            continue
        header_routes.append((str(rule.get("name") or where), conditions, entries[0][0]))
    if split is None:
        raise MeshPlanError("spec.rules: no rule without matches (the weighted split) found")
    return assemble_plan(split, header_routes, unsupported)


# ---- Ingress: ALB and NGINX -------------------------------------------------------------------


def _paths(ingress: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(host, path) of every rule path."""
    found = []
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        for path in (rule.get("http") or {}).get("paths") or []:
            found.append((str(rule.get("host") or ""), path))
    return found


def _backend(path: Mapping[str, Any]) -> Mapping[str, Any]:
    return (path.get("backend") or {}).get("service") or {}


def alb_action_services(ingress: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(Service, annotation key) of each `use-annotation` backend with an action annotation."""
    annotations = (ingress.get("metadata") or {}).get("annotations") or {}
    found = []
    for _, path in _paths(ingress):
        backend = _backend(path)
        if (backend.get("port") or {}).get("name") != "use-annotation":
            continue
        service = str(backend.get("name"))
        keys = [k for k in annotations if k.endswith(f"/actions.{service}")]
        if keys and (service, keys[0]) not in found:
            found.append((service, keys[0]))
    return found


def _alb_annotation(obj: Mapping[str, Any], key: str) -> Any:
    where = f"metadata.annotations[{key}]"
    try:
        return json.loads((obj["metadata"].get("annotations") or {})[key])
    except json.JSONDecodeError as err:
        raise MeshPlanError(f"{where}: not JSON ({err})") from None


def _alb_forward_groups(obj: Mapping[str, Any], key: str) -> _Split:
    where = f"metadata.annotations[{key}]"
    action = _alb_annotation(obj, key)
    if not isinstance(action, Mapping) or action.get("Type") != "forward":
        raise MeshPlanError(f"{where}.Type: only forward actions are realized")
    return _named_split(
        (action.get("ForwardConfig") or {}).get("TargetGroups"),
        namespace=_namespace(obj),
        where=f"{where}.ForwardConfig.TargetGroups",
        name_key="ServiceName",
        default_weight=None,
        weight_key="Weight",
    )


def _alb_header_conditions(obj: Mapping[str, Any], key: str) -> tuple[HeaderCondition, ...]:
    """The header conditions of `conditions.<route>`: one http-header condition, any value."""
    conditions = _alb_annotation(obj, key)
    where = f"metadata.annotations[{key}]"
    if not isinstance(conditions, list) or len(conditions) != 1:
        raise MeshPlanError(f"{where}: only one http-header condition is realized")
    condition = conditions[0] if isinstance(conditions[0], Mapping) else {}
    config = condition.get("httpHeaderConfig")
    config = config if isinstance(config, Mapping) else {}
    values = config.get("values")
    if condition.get("field") != "http-header" or not isinstance(values, list) or not values:
        raise MeshPlanError(f"{where}[0]: needs field http-header and httpHeaderConfig.values")
    header = str(config.get("httpHeaderName") or "").lower()
    return tuple(HeaderCondition(header, str(value), "exact") for value in values)


def plan_alb_ingress(obj: Mapping[str, Any], *, roles: tuple[str, str] | None) -> MeshPlan:
    """The split of an ALB Ingress's first forward action without conditions (the one Argo
    writes for weights) and the header routes of the actions with conditions."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    split: _Split | None = None
    header_routes: _HeaderRoutes = []
    unsupported: list[str] = []
    for service, key in alb_action_services(obj):
        condition_key = key.replace("/actions.", "/conditions.", 1)
        if condition_key not in annotations:
            if split is None:
                split = _ordered(_alb_forward_groups(obj, key), roles)
            else:
                unsupported.append(f"metadata.annotations[{key}]: only the first split is realized")
            continue
        try:
            groups = _alb_forward_groups(obj, key)
            if len(groups) != 1:
                raise MeshPlanError(f"metadata.annotations[{key}]: a header route needs one group")
            header_routes.append(
                (service, _alb_header_conditions(obj, condition_key), groups[0][0])
            )
        except MeshPlanError as err:
            unsupported.append(str(err))
    if split is None:
        raise MeshPlanError(
            "metadata.annotations: no actions.<service> for a use-annotation backend"
        )
    return assemble_plan(split, header_routes, unsupported)


def is_nginx_canary(ingress: Mapping[str, Any], prefix: str = NGINX_PREFIX) -> bool:
    annotations = (ingress.get("metadata") or {}).get("annotations") or {}
    return annotations.get(f"{prefix}/canary") == "true"


def _first_backend(ingress: Mapping[str, Any], where: str) -> tuple[set[str], ServiceRef]:
    paths = _paths(ingress)
    if not paths:
        raise MeshPlanError(f"{where}spec.rules: no HTTP path")
    hosts = {host for host, _ in paths}
    name = _backend(paths[0][1]).get("name")
    if not isinstance(name, str) or not name:
        raise MeshPlanError(f"{where}spec.rules[0].http.paths[0].backend.service.name: required")
    return hosts, ServiceRef(name, _namespace(ingress))


def _nginx_header(annotations: Mapping[str, str], where: str) -> tuple[HeaderCondition, ...]:
    header = annotations.get(f"{NGINX_PREFIX}/canary-by-header")
    if not header:
        return ()
    value = annotations.get(f"{NGINX_PREFIX}/canary-by-header-value")
    if value:
        return (HeaderCondition(header.lower(), value, "exact"),)
    pattern = annotations.get(f"{NGINX_PREFIX}/canary-by-header-pattern")
    if pattern:
        return (HeaderCondition(header.lower(), pattern, "regex"),)
    return (HeaderCondition(header.lower(), "always", "exact"),)


def plan_nginx_ingress(
    stable: Mapping[str, Any], canaries: Sequence[Mapping[str, Any]]
) -> MeshPlan:
    """The split between a stable Ingress's backend and the canary Ingress for its hosts."""
    hosts, stable_ref = _first_backend(stable, "")
    same_host = [c for c in canaries if _first_backend(c, "canary Ingress ")[0] & hosts]
    if not same_host:
        return assemble_plan([(stable_ref, 100)], [], [])
    canary = same_host[0]
    name = str(canary["metadata"]["name"])
    annotations = canary["metadata"].get("annotations") or {}
    where = f"Ingress {name} metadata.annotations"
    weight = _int_weight(
        annotations.get(f"{NGINX_PREFIX}/canary-weight", "0"), f"{where}.canary-weight"
    )
    total = _int_weight(
        annotations.get(f"{NGINX_PREFIX}/canary-weight-total", "100"),
        f"{where}.canary-weight-total",
    )
    if total == 0 or weight > total:
        raise MeshPlanError(f"{where}.canary-weight: {weight} out of {total}")
    canary_ref = _first_backend(canary, "canary Ingress ")[1]
    split = [(stable_ref, total - weight), (canary_ref, weight)]
    if weight == 0:  # the mesh needs a non-zero total; 0 of N is all to stable
        split = [(stable_ref, 100), (canary_ref, 0)]
    conditions = _nginx_header(annotations, where)
    header_routes: _HeaderRoutes = [(name, conditions, canary_ref)] if conditions else []
    unsupported = [
        f"Ingress {other['metadata']['name']}: a second canary Ingress is not realized"
        for other in same_host[1:]
    ]
    return assemble_plan(split, header_routes, unsupported)
