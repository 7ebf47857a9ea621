"""What an AWS App Mesh VirtualService asks the local mesh for.

Purely computational, like `router_objects.py`. The VirtualService (`appmesh.k8s.aws`) names
its provider: a VirtualRouter (`spec.provider.virtualRouter.virtualRouterRef`, `namespace`
defaulting to the VirtualService's) or one VirtualNode (`...virtualNode.virtualNodeRef`). Of a
VirtualRouter the first route named in the Rollout's `appMesh.virtualService.routes` (default:
the first route) is the split: the first of `httpRoute`, `tcpRoute`, `http2Route`,
`grpcRoute` holds `action.weightedTargets[].{virtualNodeRef, weight}` (App Mesh's weights are
relative: they are scaled to 100). Each VirtualNode is reached as App Mesh reaches it, through
`spec.serviceDiscovery.dns.hostname`: the Service of that name (whose selector the Rollout
keeps on the node's ReplicaSet). The stable and canary are the Rollout's
`virtualNodeGroup` nodes.

Not realized, and listed in `MeshPlan.unsupported`: the route's `match` (every request sent to
the router's address is routed), routes after the first named one. Cloud Map service
discovery cannot be realized locally and is a `MeshPlanError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.local.mesh.plan import (
    MeshPlan,
    MeshPlanError,
    ServiceRef,
    assemble_plan,
    parse_host,
)

__all__ = ["ROUTE_TYPES", "plan_app_mesh_service"]

ROUTE_TYPES = ("httpRoute", "tcpRoute", "http2Route", "grpcRoute")
Objects = Mapping[tuple[str, str, str], Mapping[str, Any]]  # (kind, namespace, name)


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _ref(ref: Any, default_namespace: str, where: str) -> tuple[str, str]:
    name = _mapping(ref).get("name")
    if not isinstance(name, str) or not name:
        raise MeshPlanError(f"{where}.name: required string")
    return str(_mapping(ref).get("namespace") or default_namespace), name


def node_service(objects: Objects, namespace: str, name: str) -> ServiceRef:
    """The Service a VirtualNode is reached through (its DNS service discovery)."""
    node = objects.get(("VirtualNode", namespace, name))
    where = f"VirtualNode {namespace}/{name}"
    if node is None:
        raise MeshPlanError(f"{where}: not found")
    discovery = _mapping(_mapping(node.get("spec")).get("serviceDiscovery"))
    if "dns" not in discovery:
        raise MeshPlanError(
            f"{where} spec.serviceDiscovery: only dns is realized locally "
            f"(not {', '.join(sorted(discovery)) or 'none'})"
        )
    hostname = _mapping(discovery["dns"]).get("hostname")
    return parse_host(hostname, namespace, f"{where} spec.serviceDiscovery.dns")


def _split_route(router: Mapping[str, Any], route_names: Sequence[str]) -> tuple[Any, list[str]]:
    """The weightedTargets of the route that is the split, and what is not realized."""
    name = router["metadata"]["name"]
    routes = [r for r in _mapping(router.get("spec")).get("routes") or [] if isinstance(r, Mapping)]
    named = [r for r in routes if not route_names or r.get("name") in route_names]
    if not named:
        raise MeshPlanError(f"VirtualRouter {name} spec.routes: no route to split")
    route = named[0]
    kind = next((k for k in ROUTE_TYPES if isinstance(route.get(k), Mapping)), None)
    where = f"VirtualRouter {name} spec.routes[{route.get('name')}]"
    if kind is None:
        raise MeshPlanError(f"{where}: needs one of {', '.join(ROUTE_TYPES)}")
    unsupported = [
        f"VirtualRouter {name} spec.routes[{r.get('name')}]: not realized" for r in named[1:]
    ]
    return _mapping(route[kind].get("action")).get("weightedTargets"), unsupported


def plan_app_mesh_service(
    service: Mapping[str, Any],
    objects: Objects,
    *,
    route_names: Sequence[str],
    roles: tuple[str, str] | None,
) -> MeshPlan:
    """The split an App Mesh VirtualService's provider asks for."""
    namespace = _namespace(service)
    provider = _mapping(_mapping(service.get("spec")).get("provider"))
    if "virtualNode" in provider:
        ns, name = _ref(
            _mapping(provider["virtualNode"]).get("virtualNodeRef"),
            namespace,
            "spec.provider.virtualNode.virtualNodeRef",
        )
        return assemble_plan([(node_service(objects, ns, name), 100)], [], [])
    where = "spec.provider.virtualRouter.virtualRouterRef"
    ns, name = _ref(
        _mapping(provider.get("virtualRouter")).get("virtualRouterRef"), namespace, where
    )
    router = objects.get(("VirtualRouter", ns, name))
    if router is None:
        raise MeshPlanError(f"{where}: VirtualRouter {ns}/{name} not found")
    targets, unsupported = _split_route(router, route_names)
    if not isinstance(targets, list) or not targets:
        raise MeshPlanError(f"VirtualRouter {name}: the split route has no weightedTargets")
    split: list[tuple[str, ServiceRef, int]] = []
    for index, target in enumerate(targets):
        at = f"VirtualRouter {name} weightedTargets[{index}]"
        node_ns, node = _ref(_mapping(target).get("virtualNodeRef"), ns, f"{at}.virtualNodeRef")
        weight = _mapping(target).get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or weight < 0:
            raise MeshPlanError(f"{at}.weight: must be a non-negative integer, not {weight!r}")
        split.append((node, node_service(objects, node_ns, node), weight))
    if roles is not None:
        ranked = {roles[0]: 0, roles[1]: 1}
        split.sort(key=lambda item: ranked.get(item[0], 2))
    return assemble_plan([(ref, weight) for _, ref, weight in split], [], unsupported)
