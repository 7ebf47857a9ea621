"""A canary's `trafficRouting`: which router splits traffic and what it needs.

Each router's block is validated field by field and kept as a mapping in the view (the
router modules read their own block); `TrafficRouting.routers` names the ones configured.
Requirements follow argo-rollouts validation (`requireCanaryStableServices`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import schema as s
from headway.model.views import view

__all__ = [
    "ROUTER_FIELDS",
    "TRAFFIC_ROUTING",
    "TrafficRouting",
    "ambassador_canary_mapping",
    "needs_stable_and_canary",
]

ROUTER_FIELDS = ("istio", "nginx", "alb", "smi", "ambassador", "traefik", "apisix", "appMesh")


@view
class TrafficRouting:
    istio: Mapping[str, Any] | None
    nginx: Mapping[str, Any] | None
    alb: Mapping[str, Any] | None
    smi: Mapping[str, Any] | None
    ambassador: Mapping[str, Any] | None
    traefik: Mapping[str, Any] | None
    apisix: Mapping[str, Any] | None
    app_mesh: Mapping[str, Any] | None
    plugins: Mapping[str, Any]
    managed_routes: tuple[str, ...]
    max_traffic_weight: int

    @property
    def routers(self) -> tuple[str, ...]:
        """Configured routers by field name, plugins as `plugin:<name>`."""
        named = s.set_fields(self, ROUTER_FIELDS)
        return named + tuple(f"plugin:{name}" for name in self.plugins)


def needs_stable_and_canary(routing: Mapping[str, Any], *, ping_pong: bool) -> bool:
    """Whether Argo Rollouts requires both stableService and canaryService for `routing`."""
    if routing.get("alb") is not None or _istio_host_split(routing):
        return not ping_pong
    return any(routing.get(k) is not None for k in (*ROUTER_FIELDS[3:], "nginx"))


def ambassador_canary_mapping(base: str) -> str:
    """The canary Mapping Argo Rollouts keeps beside Ambassador Mapping `base`: `<base>-canary`,
    the base name cut to 246 characters so the name fits 253 (`buildCanaryMappingName`)."""
    return f"{base[:246]}-canary"


def _istio_host_split(routing: Mapping[str, Any]) -> bool:
    istio = routing.get("istio")
    return isinstance(istio, Mapping) and istio.get("destinationRule") is None


def _names_a_router(routing: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if not any(routing.get(k) is not None for k in (*ROUTER_FIELDS, "plugins")):
        report.error(path, f"names no traffic router (one of {', '.join(ROUTER_FIELDS)}, plugins)")


def _one_of(*names: str) -> s.Check:
    def check(block: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
        if all(block.get(n) is None for n in names):
            report.error((*path, names[0]), f"needs one of: {', '.join(names)}")

    return check


def _not_empty(name: str, why: str) -> s.Check:
    def check(block: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
        if block.get(name) == []:
            report.error((*path, name), f"must name at least one ({why})")

    return check


def _managed_route_names(value: Any) -> Any:
    return tuple(route["name"] for route in value)


class _RouteNames(s.ListOf):
    def convert(self, value: Any) -> Any:
        return _managed_route_names(value)


_ISTIO_VS = s.Schema(
    "IstioVirtualService",
    (
        s.Field("name", s.STR, required=True),
        s.Field("routes", s.STRING_LIST),
        s.Field(
            "tlsRoutes",
            s.ListOf(
                s.Obj(
                    s.Schema(
                        "TLSRoute", (s.Field("port", s.INT), s.Field("sniHosts", s.STRING_LIST))
                    )
                )
            ),
        ),
        s.Field("tcpRoutes", s.ListOf(s.Obj(s.Schema("TCPRoute", (s.Field("port", s.INT),))))),
    ),
)
_ISTIO = s.Schema(
    "IstioTrafficRouting",
    (
        s.Field("virtualService", s.Obj(_ISTIO_VS)),
        s.Field("virtualServices", s.ListOf(s.Obj(_ISTIO_VS))),
        s.Field(
            "destinationRule",
            s.Obj(
                s.Schema(
                    "IstioDestinationRule",
                    (
                        s.Field("name", s.STR, required=True),
                        s.Field("canarySubsetName", s.STR, required=True),
                        s.Field("stableSubsetName", s.STR, required=True),
                        s.Field("additionalSubsetNames", s.STRING_LIST),
                    ),
                )
            ),
        ),
    ),
    checks=(_one_of("virtualService", "virtualServices"),),
)
_NGINX = s.Schema(
    "NginxTrafficRouting",
    (
        s.Field("stableIngress", s.STR),
        s.Field("stableIngresses", s.STRING_LIST),
        s.Field("annotationPrefix", s.STR),
        s.Field("additionalIngressAnnotations", s.STRING_MAP),
        s.Field("canaryIngressAnnotations", s.STRING_MAP),
    ),
    checks=(_one_of("stableIngress", "stableIngresses"),),
)
_ALB = s.Schema(
    "ALBTrafficRouting",
    (
        s.Field("ingress", s.STR),
        s.Field("ingresses", s.STRING_LIST),
        s.Field("servicePort", s.INT, required=True),
        s.Field("rootService", s.STR),
        s.Field("annotationPrefix", s.STR),
        s.Field(
            "stickinessConfig",
            s.Obj(
                s.Schema(
                    "StickinessConfig",
                    (
                        s.Field("enabled", s.BOOL, required=True),
                        s.Field("durationSeconds", s.INT, required=True),
                    ),
                )
            ),
        ),
    ),
    checks=(_one_of("ingress", "ingresses"),),
)
_SMI = s.Schema(
    "SMITrafficRouting", (s.Field("rootService", s.STR), s.Field("trafficSplitName", s.STR))
)
_AMBASSADOR = s.Schema(
    "AmbassadorTrafficRouting",
    (s.Field("mappings", s.STRING_LIST, required=True),),
    checks=(_not_empty("mappings", "with none, no traffic would move to the canary"),),
)
_TRAEFIK = s.Schema(
    "TraefikTrafficRouting", (s.Field("weightedTraefikServiceName", s.STR, required=True),)
)
_APISIX = s.Schema(
    "ApisixTrafficRouting",
    (
        s.Field(
            "route",
            s.Obj(
                s.Schema(
                    "ApisixRoute",
                    (s.Field("name", s.STR, required=True), s.Field("rules", s.STRING_LIST)),
                )
            ),
            required=True,
        ),
    ),
)
_NAME_ONLY = s.Schema("Ref", (s.Field("name", s.STR, required=True),))
_APP_MESH = s.Schema(
    "AppMeshTrafficRouting",
    (
        s.Field(
            "virtualService",
            s.Obj(
                s.Schema(
                    "AppMeshVirtualService",
                    (s.Field("name", s.STR, required=True), s.Field("routes", s.STRING_LIST)),
                )
            ),
            required=True,
        ),
        s.Field(
            "virtualNodeGroup",
            s.Obj(
                s.Schema(
                    "AppMeshVirtualNodeGroup",
                    (
                        s.Field("canaryVirtualNodeRef", s.Obj(_NAME_ONLY), required=True),
                        s.Field("stableVirtualNodeRef", s.Obj(_NAME_ONLY), required=True),
                    ),
                )
            ),
            required=True,
        ),
    ),
)

TRAFFIC_ROUTING = s.Schema(
    "RolloutTrafficRouting",
    (
        s.Field("istio", s.Obj(_ISTIO)),
        s.Field("nginx", s.Obj(_NGINX)),
        s.Field("alb", s.Obj(_ALB)),
        s.Field("smi", s.Obj(_SMI)),
        s.Field("ambassador", s.Obj(_AMBASSADOR)),
        s.Field("traefik", s.Obj(_TRAEFIK)),
        s.Field("apisix", s.Obj(_APISIX)),
        s.Field("appMesh", s.Obj(_APP_MESH)),
        s.Field("plugins", s.AnyValue(mapping=True), default={}),
        s.Field("managedRoutes", _RouteNames(s.Obj(_NAME_ONLY))),
        s.Field("maxTrafficWeight", s.Scalar("integer", minimum=1), default=100),
    ),
    TrafficRouting,
    checks=(_names_a_router,),
)
