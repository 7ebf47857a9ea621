"""Which non-Istio router objects the local mesh realizes: the ones a Rollout routes through.

Purely computational over listed objects. For each canary Rollout with `trafficRouting`:

* `smi`: the TrafficSplit `trafficSplitName` (default: the Rollout's name);
* `traefik`: the TraefikService `weightedTraefikServiceName`;
* `plugins["argoproj-labs/gatewayAPI"]`: each HTTPRoute of `httpRoute` / `httpRoutes[].name`,
  in the plugin's `namespace` (default: the Rollout's);
* `alb`: each Ingress of `ingress` / `ingresses`;
* `nginx`: each stable Ingress of `stableIngress` / `stableIngresses`, with the canary
  Ingresses (`<prefix>/canary: "true"`) of its namespace;
* `ambassador`: each base Mapping of `mappings`, with the canary Mapping beside it;
* `apisix`: the ApisixRoute `route.name`, with the managed ApisixRoutes (`managedRoutes`)
  the Rollout owns;
* `appMesh`: the App Mesh VirtualService `virtualService.name`, with its VirtualRouter and
  VirtualNodes.

Each becomes a `Routed`: the object the router's address annotation and Events go on, and
the plan (or the `MeshPlanError`) the mesh realizes for it. Objects not found are skipped:
the Rollout controller creates some of them (a canary Ingress, a TrafficSplit) on its first step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from headway.cluster.local.mesh.api_gateway_objects import (
    plan_ambassador_mapping,
    plan_apisix_route,
)
from headway.cluster.local.mesh.app_mesh_objects import plan_app_mesh_service
from headway.cluster.local.mesh.plan import MeshPlan, MeshPlanError
from headway.cluster.local.mesh.router_objects import (
    is_nginx_canary,
    plan_alb_ingress,
    plan_http_route,
    plan_nginx_ingress,
    plan_traefik_service,
    plan_traffic_split,
)
from headway.model.obj import Obj
from headway.model.traffic_routing import ambassador_canary_mapping

__all__ = ["ROUTED_KINDS", "Routed", "routed_objects"]

GATEWAY_PLUGIN = "argoproj-labs/gatewayAPI"
# (apiVersion, kind) the mesh lists for routed objects, in the order they are looked for.
ROUTED_KINDS = (
    ("split.smi-spec.io/v1alpha1", "TrafficSplit"),
    ("split.smi-spec.io/v1alpha2", "TrafficSplit"),
    ("split.smi-spec.io/v1alpha3", "TrafficSplit"),
    ("traefik.io/v1alpha1", "TraefikService"),
    ("traefik.containo.us/v1alpha1", "TraefikService"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("networking.k8s.io/v1", "Ingress"),
    ("getambassador.io/v2", "Mapping"),
    ("getambassador.io/v3alpha1", "Mapping"),
    ("apisix.apache.org/v2", "ApisixRoute"),
    # App Mesh's kinds: its VirtualService is keyed apart from Istio's, which the mesh lists
    # on its own (virtual_services.py), so the two never meet in `Objects`.
    ("appmesh.k8s.aws/v1beta2", "VirtualService"),
    ("appmesh.k8s.aws/v1beta2", "VirtualRouter"),
    ("appmesh.k8s.aws/v1beta2", "VirtualNode"),
)

Objects = Mapping[tuple[str, str, str], Obj]  # (kind, namespace, name) -> object


@dataclass(frozen=True)
class Routed:
    obj: Obj
    plan: MeshPlan | None
    error: str = ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(block: Mapping[str, Any], one: str, many: str) -> list[str]:
    names = [block.get(one)] + [
        item.get("name") if isinstance(item, Mapping) else item for item in block.get(many) or []
    ]
    return [str(n) for n in names if isinstance(n, str) and n]


def _planned(obj: Obj, plan: Callable[[Obj], MeshPlan]) -> Routed:
    try:
        return Routed(obj, plan(obj))
    except MeshPlanError as err:
        return Routed(obj, None, str(err))


def _for_rollout(rollout: Obj, objects: Objects) -> list[Routed]:
    canary = _mapping(_mapping(_mapping(rollout.get("spec")).get("strategy")).get("canary"))
    routing = _mapping(canary.get("trafficRouting"))
    namespace = str(rollout["metadata"].get("namespace") or "default")
    roles = (str(canary.get("stableService")), str(canary.get("canaryService")))
    found: list[Routed] = []

    def each(kind: str, ns: str, names: Iterable[str], plan: Callable[[Obj], MeshPlan]) -> None:
        for name in names:
            obj = objects.get((kind, ns, name))
            if obj is not None:
                found.append(_planned(obj, plan))

    if "smi" in routing:
        smi = _mapping(routing["smi"])
        name = str(smi.get("trafficSplitName") or rollout["metadata"]["name"])
        each("TrafficSplit", namespace, [name], lambda o: plan_traffic_split(o, roles=roles))
    if "traefik" in routing:
        names = _names(_mapping(routing["traefik"]), "weightedTraefikServiceName", "")
        each("TraefikService", namespace, names, lambda o: plan_traefik_service(o, roles=roles))
    gateway = _mapping(_mapping(routing.get("plugins")).get(GATEWAY_PLUGIN))
    if gateway:
        ns = str(gateway.get("namespace") or namespace)
        names = _names(gateway, "httpRoute", "httpRoutes")
        each("HTTPRoute", ns, names, lambda o: plan_http_route(o, roles=roles))
    if "alb" in routing:
        names = _names(_mapping(routing["alb"]), "ingress", "ingresses")
        each("Ingress", namespace, names, lambda o: plan_alb_ingress(o, roles=roles))
    if "nginx" in routing:
        names = _names(_mapping(routing["nginx"]), "stableIngress", "stableIngresses")
        canaries = [
            o
            for (kind, ns, _), o in objects.items()
            if kind == "Ingress" and ns == namespace and is_nginx_canary(o)
        ]
        each("Ingress", namespace, names, lambda o: plan_nginx_ingress(o, canaries))
    if "ambassador" in routing:
        found.extend(_ambassador(_mapping(routing["ambassador"]), namespace, objects))
    if "apisix" in routing:
        found.extend(_apisix(rollout, routing, roles, objects))
    if "appMesh" in routing:
        found.extend(_app_mesh(_mapping(routing["appMesh"]), namespace, objects))
    return found


def _app_mesh(block: Mapping[str, Any], namespace: str, objects: Objects) -> list[Routed]:
    service = _mapping(block.get("virtualService"))
    obj = objects.get(("VirtualService", namespace, str(service.get("name"))))
    if obj is None:
        return []
    nodes = _mapping(block.get("virtualNodeGroup"))
    roles = (
        str(_mapping(nodes.get("stableVirtualNodeRef")).get("name")),
        str(_mapping(nodes.get("canaryVirtualNodeRef")).get("name")),
    )
    plan = partial(
        plan_app_mesh_service,
        objects=objects,
        route_names=[str(r) for r in service.get("routes") or []],
        roles=roles,
    )
    return [_planned(obj, plan)]


def _ambassador(block: Mapping[str, Any], namespace: str, objects: Objects) -> list[Routed]:
    found = []
    for name in _names(block, "", "mappings"):
        base = objects.get(("Mapping", namespace, name))
        if base is not None:
            canary = objects.get(("Mapping", namespace, ambassador_canary_mapping(name)))
            found.append(_planned(base, partial(plan_ambassador_mapping, canary=canary)))
    return found


def _apisix(
    rollout: Obj, routing: Mapping[str, Any], roles: tuple[str, str], objects: Objects
) -> list[Routed]:
    route = _mapping(_mapping(routing["apisix"]).get("route"))
    namespace = str(rollout["metadata"].get("namespace") or "default")
    obj = objects.get(("ApisixRoute", namespace, str(route.get("name"))))
    if obj is None:
        return []
    plan = partial(
        plan_apisix_route,
        rule_names=[str(r) for r in route.get("rules") or [route.get("name")]],
        header_routes=_owned(rollout, objects, "ApisixRoute", _managed_names(routing)),
        roles=roles,
    )
    return [_planned(obj, plan)]


def _managed_names(routing: Mapping[str, Any]) -> list[str]:
    routes = routing.get("managedRoutes")
    names = [_mapping(r).get("name") for r in routes] if isinstance(routes, list) else []
    return [str(name) for name in names if name]


def _owned(rollout: Obj, objects: Objects, kind: str, names: Iterable[str]) -> list[Obj]:
    """The objects of `kind` named `names` in the Rollout's namespace that it controls."""
    namespace = str(rollout["metadata"].get("namespace") or "default")
    uid = rollout["metadata"].get("uid")
    found = []
    for name in names:
        obj = objects.get((kind, namespace, name))
        refs = (obj or {}).get("metadata", {}).get("ownerReferences") or []
        if obj is not None and any(r.get("controller") and r.get("uid") == uid for r in refs):
            found.append(obj)
    return found


def routed_objects(rollouts: Iterable[Obj], objects: Objects) -> list[Routed]:
    """Every object a Rollout routes through, once each (by uid), with its plan."""
    seen: set[str] = set()
    routed: list[Routed] = []
    for rollout in rollouts:
        for item in _for_rollout(rollout, objects):
            uid = str(item.obj["metadata"].get("uid"))
            if uid not in seen:
                seen.add(uid)
                routed.append(item)
    return routed
