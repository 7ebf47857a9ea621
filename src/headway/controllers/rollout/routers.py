"""Which traffic-routing reconciler a Rollout gets, from its `strategy.canary.trafficRouting`.

One builder per router (Istio, SMI, Traefik, NGINX, ALB, Ambassador, APISIX, App Mesh, the
Gateway API plugin); each reads its own block, already validated by the Rollout schema, and
the Rollout's stable and canary Services. A Rollout without trafficRouting gets None
(replica-count canary).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from headway.cluster.protocol import Cluster
from headway.controllers.rollout.actions import RouterFactory
from headway.model.obj import Obj
from headway.routers.control.alb import ALBReconciler
from headway.routers.control.ambassador import AmbassadorReconciler
from headway.routers.control.apisix import ApisixReconciler
from headway.routers.control.appmesh import AppMeshReconciler
from headway.routers.control.gateway_api import PLUGIN_NAME, GatewayAPIReconciler
from headway.routers.control.istio import IstioReconciler
from headway.routers.control.nginx import NginxReconciler
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingReconciler
from headway.routers.control.smi import SMIReconciler
from headway.routers.control.traefik import TraefikReconciler

__all__ = ["traffic_routers"]

_Builder = Callable[[Cluster, "_Facts", Mapping[str, Any]], TrafficRoutingReconciler]


class _Facts:
    """What every builder needs from the Rollout."""

    def __init__(self, ro: Obj, canary: Mapping[str, Any]) -> None:
        meta = ro["metadata"]
        routing = canary.get("trafficRouting") or {}
        self.namespace = str(meta.get("namespace") or "default")
        self.rollout = RolloutIdentity(
            name=str(meta["name"]), namespace=self.namespace, uid=str(meta.get("uid") or "")
        )
        self.stable = str(canary.get("stableService"))
        self.canary = str(canary.get("canaryService"))
        self.managed = [str(r.get("name")) for r in routing.get("managedRoutes") or []]
        self.max_weight = routing.get("maxTrafficWeight")
        weights = ((ro.get("status") or {}).get("canary") or {}).get("weights") or {}
        # the Services the previous reconcile sent an experiment's share to (Argo's status)
        self.previous_additional = [
            str(d.get("serviceName")) for d in weights.get("additional") or [] if d
        ]


def _names(block: Mapping[str, Any], one: str, many: str) -> list[str]:
    names = [block[one]] if block.get(one) else []
    for item in block.get(many) or []:
        names.append(item.get("name") if isinstance(item, Mapping) else item)
    return [str(n) for n in names]


def _istio(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    services = [block["virtualService"]] if block.get("virtualService") else []
    services += list(block.get("virtualServices") or [])
    return IstioReconciler(
        cluster,
        namespace=f.namespace,
        virtual_services=services,
        stable_service=f.stable,
        canary_service=f.canary,
        managed_routes=f.managed,
        destination_rule=block.get("destinationRule"),
        rollout_name=f.rollout.name,
    )


def _smi(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    return SMIReconciler(
        cluster,
        rollout=f.rollout,
        stable_service=f.stable,
        canary_service=f.canary,
        root_service=str(block.get("rootService") or ""),
        traffic_split_name=str(block.get("trafficSplitName") or ""),
    )


def _traefik(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    return TraefikReconciler(
        cluster,
        namespace=f.namespace,
        traefik_service=str(block["weightedTraefikServiceName"]),
        stable_service=f.stable,
        canary_service=f.canary,
    )


def _nginx(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    return NginxReconciler(
        cluster,
        rollout=f.rollout,
        stable_ingresses=_names(block, "stableIngress", "stableIngresses"),
        stable_service=f.stable,
        canary_service=f.canary,
        annotation_prefix=str(block.get("annotationPrefix") or ""),
        additional_annotations=block.get("additionalIngressAnnotations") or {},
        canary_annotations=block.get("canaryIngressAnnotations") or {},
        max_traffic_weight=f.max_weight if isinstance(f.max_weight, int) else None,
    )


def _alb(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    stickiness = block.get("stickinessConfig") or {}
    return ALBReconciler(
        cluster,
        rollout=f.rollout,
        ingresses=_names(block, "ingress", "ingresses"),
        stable_service=f.stable,
        canary_service=f.canary,
        service_port=int(block["servicePort"]),
        root_service=str(block.get("rootService") or ""),
        annotation_prefix=str(block.get("annotationPrefix") or ""),
        stickiness_seconds=stickiness.get("durationSeconds") if stickiness.get("enabled") else None,
        managed_routes=f.managed,
    )


def _ambassador(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    return AmbassadorReconciler(
        cluster,
        rollout=f.rollout,
        mappings=[str(name) for name in block.get("mappings") or []],
        stable_service=f.stable,
        canary_service=f.canary,
    )


def _apisix(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    route = block["route"]
    return ApisixReconciler(
        cluster,
        rollout=f.rollout,
        route=str(route["name"]),
        rules=[str(rule) for rule in route.get("rules") or []],
        stable_service=f.stable,
        canary_service=f.canary,
        managed_routes=f.managed,
    )


def _app_mesh(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    service, nodes = block["virtualService"], block["virtualNodeGroup"]
    return AppMeshReconciler(
        cluster,
        rollout=f.rollout,
        virtual_service=str(service["name"]),
        routes=[str(route) for route in service.get("routes") or []],
        stable_node=str(nodes["stableVirtualNodeRef"]["name"]),
        canary_node=str(nodes["canaryVirtualNodeRef"]["name"]),
    )


def _gateway(cluster: Cluster, f: _Facts, block: Mapping[str, Any]) -> TrafficRoutingReconciler:
    return GatewayAPIReconciler(
        cluster,
        namespace=str(block.get("namespace") or f.namespace),
        http_routes=_names(block, "httpRoute", "httpRoutes"),
        stable_service=f.stable,
        canary_service=f.canary,
        managed_routes=f.managed,
        config_map=str(block.get("configMap") or ""),
        rollout_namespace=f.namespace,
        previous_additional=f.previous_additional,
        header_routes=_header_route_names(block),
    )


def _header_route_names(block: Mapping[str, Any]) -> list[str]:
    """The routes the plugin writes header rules to: `httpRoute`, and each `httpRoutes` entry
    with `useHeaderRoutes: true` (`insertGatewayAPIRouteLists`)."""
    names = [str(block["httpRoute"])] if block.get("httpRoute") else []
    for item in block.get("httpRoutes") or []:
        if isinstance(item, Mapping) and item.get("useHeaderRoutes") is True:
            names.append(str(item.get("name")))
    return names


_BUILDERS: dict[str, _Builder] = {
    "istio": _istio,
    "smi": _smi,
    "traefik": _traefik,
    "nginx": _nginx,
    "alb": _alb,
    "ambassador": _ambassador,
    "apisix": _apisix,
    "appMesh": _app_mesh,
}


def traffic_routers(cluster: Cluster) -> RouterFactory:
    """The reconciler for each Rollout's router, or None without trafficRouting."""

    def build(ro: Obj) -> TrafficRoutingReconciler | None:
        canary = ((ro.get("spec") or {}).get("strategy") or {}).get("canary") or {}
        routing = canary.get("trafficRouting") or {}
        facts = _Facts(ro, canary)
        for field, builder in _BUILDERS.items():
            if routing.get(field):
                return builder(cluster, facts, routing[field])
        plugin = (routing.get("plugins") or {}).get(PLUGIN_NAME)
        if plugin:
            return _gateway(cluster, facts, plugin)
        return None

    return build
