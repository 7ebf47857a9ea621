"""The fields of router objects that a Rollout's traffic routing writes while it runs.

A canary Rollout with `trafficRouting` moves traffic by editing objects that usually live in
Git beside it: the weights of an Istio VirtualService's routes, of a Gateway API HTTPRoute's
backendRefs, of an APISIX ApisixRoute's backends, of a TraefikService's weighted services and
of an App Mesh VirtualRouter's weighted targets, the forward action annotation of an ALB
Ingress, and the pod-template-hash label of App Mesh VirtualNodes. Git holds the starting
values (stable 100, canary 0); mid-canary the live values differ, and a sync that writes Git's
back moves the traffic behind the Rollout's back (seed 000: "Git reconciliation fighting
traffic management").

`route_fields(objects)` finds, among one Application's rendered objects, each such object a
Rollout of the same objects names, and the field the Rollout writes in it: as a jq path
expression (what an `ignoreDifferences` entry would say) and as a normalized pointer (what
`headway check` compares entries with). `headway check` warns of routes without an ignore
rule (HW306, for repositories Argo CD also syncs); Headway's Application controller treats
these fields as its own Rollout controller's (`controllers/app/rollout_owned.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["HASH_LABEL_POINTER", "RouteField", "route_fields"]

HASH_LABEL_POINTER = "/spec/podSelector/matchLabels/rollouts-pod-template-hash"
_ALB_PREFIX = "alb.ingress.kubernetes.io"
_APP_MESH_ROUTE_TYPES = ("httpRoute", "tcpRoute", "http2Route", "grpcRoute")


@dataclass(frozen=True)
class RouteField:
    """A field of a router object (`route`, one of the objects given) a Rollout writes."""

    rollout: str  # the Rollout's name
    route: Mapping[str, Any]
    jq: str  # a jq path expression selecting the field (`.spec.http[].route[].weight`)
    pointer: str  # the same, as a normalized pointer (`/spec/http/route/weight`)
    hash_label: bool = False  # the pod-template-hash label rather than weights


def route_fields(objects: Sequence[Mapping[str, Any]]) -> Iterator[RouteField]:
    """Each field a Rollout among `objects` writes in another of `objects`, in order."""
    finder = _Finder(objects)
    for rollout in finder.of_kind("Rollout"):
        name = str(_dict(rollout.get("metadata")).get("name") or "")
        namespace = _namespace(rollout)
        for route, jq, pointer in _managed(rollout, finder, namespace):
            yield RouteField(name, route, jq, pointer, pointer == HASH_LABEL_POINTER)


class _Finder:
    def __init__(self, objects: Sequence[Mapping[str, Any]]) -> None:
        self._objects = objects

    def of_kind(self, kind: str) -> Iterator[Mapping[str, Any]]:
        return (o for o in self._objects if o.get("kind") == kind)

    def find(self, kind: str, name: str, namespace: str) -> Mapping[str, Any] | None:
        """`kind/name`, preferring one in `namespace` (or without one) when several match."""
        if not name:
            return None
        matches = [
            o
            for o in self.of_kind(kind)
            if str(_dict(o.get("metadata")).get("name") or "") == name
        ]
        for obj in matches:
            if _namespace(obj) in ("", namespace):
                return obj
        return matches[0] if matches else None


def _managed(
    rollout: Mapping[str, Any], finder: _Finder, namespace: str
) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    canary = _dict(_dict(_dict(rollout.get("spec")).get("strategy")).get("canary"))
    routing = _dict(canary.get("trafficRouting"))
    if not routing:
        return  # most Rollouts: no router to look for
    istio = _dict(routing.get("istio"))
    refs = [_dict(istio.get("virtualService")), *map(_dict, _list(istio.get("virtualServices")))]
    for ref in refs:
        found = finder.find("VirtualService", str(ref.get("name", "")), namespace)
        if found is not None and _group(found) == "networking.istio.io":
            yield found, ".spec.http[].route[].weight", "/spec/http/route/weight"
    for raw_plugin in _dict(routing.get("plugins")).values():
        plugin = _dict(raw_plugin)
        names = [
            str(plugin.get("httpRoute", "")),
            *(str(_dict(r).get("name", "")) for r in _list(plugin.get("httpRoutes"))),
        ]
        for name in names:
            found = finder.find("HTTPRoute", name, namespace)
            if found is not None:
                yield found, ".spec.rules[].backendRefs[].weight", "/spec/rules/backendRefs/weight"
    apisix = _dict(_dict(routing.get("apisix")).get("route"))
    found = finder.find("ApisixRoute", str(apisix.get("name", "")), namespace)
    if found is not None:
        yield found, ".spec.http[].backends[].weight", "/spec/http/backends/weight"
    traefik = _dict(routing.get("traefik"))
    name = str(traefik.get("weightedTraefikServiceName", ""))
    found = finder.find("TraefikService", name, namespace)
    if found is not None:
        yield found, ".spec.weighted.services[].weight", "/spec/weighted/services/weight"
    if "alb" in routing:
        stable = str(canary.get("stableService", ""))
        yield from _alb_actions(_dict(routing.get("alb")), stable, finder, namespace)
    if "appMesh" in routing:
        yield from _app_mesh(_dict(routing.get("appMesh")), finder, namespace)


def _alb_actions(
    alb: Mapping[str, Any], stable: str, finder: _Finder, namespace: str
) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """The Ingresses whose Git annotations carry the forward action the Rollout rewrites
    (`<prefix>/actions.<rootService or stableService>`): without it in Git a sync leaves the
    Rollout's annotation alone."""
    key = f"{alb.get('annotationPrefix') or _ALB_PREFIX}/actions.{alb.get('rootService') or stable}"
    names = [str(alb.get("ingress", "")), *map(str, _list(alb.get("ingresses")))]
    for name in dict.fromkeys(n for n in names if n):
        ingress = finder.find("Ingress", name, namespace)
        annotations = _dict(_dict(ingress.get("metadata")).get("annotations")) if ingress else {}
        if ingress is not None and key in annotations:
            pointer = "/metadata/annotations/" + key.replace("/", "~1")
            yield ingress, f'.metadata.annotations["{key}"]', pointer


def _app_mesh(
    app_mesh: Mapping[str, Any], finder: _Finder, namespace: str
) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """The VirtualRouter behind the App Mesh VirtualService a Rollout names, once per route
    type its routes use, and the virtualNodeGroup's VirtualNodes whose Git selector carries
    the hash label the Rollout rewrites."""
    name = str(_dict(app_mesh.get("virtualService")).get("name", ""))
    services = [
        o
        for o in finder.of_kind("VirtualService")
        if str(_dict(o.get("metadata")).get("name") or "") == name
        and _group(o) == "appmesh.k8s.aws"
    ]
    provider = _dict(_dict(services[0].get("spec")).get("provider")) if services else {}
    ref = _dict(_dict(provider.get("virtualRouter")).get("virtualRouterRef"))
    router = finder.find("VirtualRouter", str(ref.get("name", "")), namespace)
    if router is None:
        return
    routes = _list(_dict(router.get("spec")).get("routes"))
    kinds = {k for route in routes for k in _APP_MESH_ROUTE_TYPES if k in _dict(route)}
    for kind in sorted(kinds):
        yield (
            router,
            f".spec.routes[].{kind}.action.weightedTargets[].weight",
            f"/spec/routes/{kind}/action/weightedTargets/weight",
        )
    group = _dict(app_mesh.get("virtualNodeGroup"))
    for node_ref in ("stableVirtualNodeRef", "canaryVirtualNodeRef"):
        node_name = str(_dict(group.get(node_ref)).get("name", ""))
        node = finder.find("VirtualNode", node_name, namespace)
        spec = _dict(node.get("spec")) if node is not None else {}
        labels = _dict(_dict(spec.get("podSelector")).get("matchLabels"))
        if node is not None and "rollouts-pod-template-hash" in labels:
            yield node, '.spec.podSelector.matchLabels["rollouts-pod-template-hash"]', (
                HASH_LABEL_POINTER
            )


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(_dict(obj.get("metadata")).get("namespace") or "")


def _group(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
