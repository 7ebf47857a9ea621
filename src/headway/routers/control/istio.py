"""Istio traffic routing: the Rollout controller's edits of a VirtualService, as Argo does them.

Host-level traffic splitting (`trafficRouting.istio.virtualService{name, routes}` with no
DestinationRule): in each named HTTP route (or the only route, or the first unnamed one, when
`routes` is not given) the destination whose host is the stable Service gets `100 - weight`
and the one whose host is the canary Service gets `weight`. A header route is a managed HTTP
route `{name, match: [{headers: {NAME: {exact|prefix|regex: VALUE}}}], route: [{destination:
{host: CANARY, port}, weight: 100}]}`; managed routes sit above the user's routes, in
`managedRoutes` order. A VirtualService named `name.namespace` lives in that namespace.

Every edit reads the VirtualService, changes `spec.http` and writes the whole object back
with `update` (a PUT, as Argo Rollouts does), carrying the resourceVersion read, so a
concurrent writer makes the edit fail rather than be lost.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute
from headway.routers.control.reconciler import TrafficRoutingError

__all__ = ["FIELD_MANAGER", "VIRTUAL_SERVICE_API", "IstioReconciler"]

VIRTUAL_SERVICE_API = "networking.istio.io/v1beta1"
FIELD_MANAGER = "headway-rollouts-controller"


def _matches_host(host: Any, service: str) -> bool:
    return isinstance(host, str) and (host == service or host.startswith(f"{service}."))


class IstioReconciler:
    type_name = "Istio"

    def __init__(
        self,
        cluster: Cluster,
        *,
        namespace: str,
        virtual_services: Sequence[Mapping[str, Any]],
        stable_service: str,
        canary_service: str,
        managed_routes: Sequence[str] = (),
    ) -> None:
        self._cluster = cluster
        self._namespace = namespace
        self._services = list(virtual_services)
        self._stable = stable_service
        self._canary = canary_service
        self._managed = list(managed_routes)
        self._api: str | None = None

    # ---- reading and writing --------------------------------------------------------------

    def _locate(self, ref: Mapping[str, Any]) -> tuple[str, str]:
        name = str(ref.get("name", ""))
        vs_name, _, namespace = name.partition(".")
        return vs_name, namespace or self._namespace

    def _api_version(self) -> str:
        """The served version of networking.istio.io/VirtualService (v1beta1 preferred)."""
        if self._api is None:
            served = [
                k.api_version
                for k in self._cluster.discovery()
                if k.kind == "VirtualService" and k.group == "networking.istio.io"
            ]
            self._api = (
                VIRTUAL_SERVICE_API if VIRTUAL_SERVICE_API in served or not served else (served[0])
            )
        return self._api

    def _read(self, ref: Mapping[str, Any]) -> Obj:
        name, namespace = self._locate(ref)
        try:
            return self._cluster.get(self._api_version(), "VirtualService", name, namespace)
        except NotFound:
            raise TrafficRoutingError(f"VirtualService {namespace}/{name} not found") from None
        except ClusterError as err:
            raise TrafficRoutingError(f"VirtualService {namespace}/{name}: {err}") from None

    def _write(self, vs: Obj, http: list[dict[str, Any]]) -> None:
        if http == (vs.get("spec") or {}).get("http"):
            return
        replaced = dict(vs, spec=dict(vs.get("spec") or {}, http=http))
        try:
            self._cluster.update(replaced, field_manager=FIELD_MANAGER)
        except ClusterError as err:
            raise TrafficRoutingError(f"VirtualService {vs['metadata']['name']}: {err}") from None

    def _http(self, vs: Obj) -> list[dict[str, Any]]:
        http = (vs.get("spec") or {}).get("http")
        if not isinstance(http, list):
            raise TrafficRoutingError(f"VirtualService {vs['metadata']['name']} has no spec.http")
        return copy.deepcopy(http)

    # ---- which routes -----------------------------------------------------------------------

    def _route_indexes(self, ref: Mapping[str, Any], http: list[dict[str, Any]]) -> list[int]:
        names = [str(n) for n in ref.get("routes") or []]
        if not names:
            if len(http) == 1:
                return [0]
            unnamed = [i for i, route in enumerate(http) if not route.get("name")]
            if unnamed:
                return unnamed[:1]
            raise TrafficRoutingError("VirtualService has several HTTP routes; list them in routes")
        indexes = []
        for name in names:
            index = next((i for i, r in enumerate(http) if r.get("name") == name), None)
            if index is None:
                raise TrafficRoutingError(
                    f"HTTP Route '{name}' is not found in the defined Virtual Service."
                )
            indexes.append(index)
        return indexes

    def _weighted(self, route: dict[str, Any], weight: int, route_name: str) -> None:
        destinations = route.get("route") or []
        hosts = [(d.get("destination") or {}).get("host") for d in destinations]
        for service in (self._stable, self._canary):
            if not any(_matches_host(h, service) for h in hosts):
                raise TrafficRoutingError(
                    f"HTTP route '{route_name}' has no destination for Service '{service}'"
                )
        for destination in destinations:
            host = (destination.get("destination") or {}).get("host")
            if _matches_host(host, self._canary):
                destination["weight"] = weight
            elif _matches_host(host, self._stable):
                destination["weight"] = 100 - weight

    # ---- the protocol -----------------------------------------------------------------------

    def set_weight(self, desired_weight: int) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = self._http(vs)
            for index in self._route_indexes(ref, http):
                self._weighted(http[index], desired_weight, str(http[index].get("name", "")))
            self._write(vs, http)

    def verify_weight(self, desired_weight: int) -> bool | None:
        for ref in self._services:
            http = self._http(self._read(ref))
            for index in self._route_indexes(ref, http):
                for destination in http[index].get("route") or []:
                    host = (destination.get("destination") or {}).get("host")
                    weight = destination.get("weight", 0)
                    if _matches_host(host, self._canary) and weight != desired_weight:
                        return False
        return True

    def _canary_port(self, ref: Mapping[str, Any], http: list[dict[str, Any]]) -> Any:
        for index in self._route_indexes(ref, http):
            for destination in http[index].get("route") or []:
                target = destination.get("destination") or {}
                if _matches_host(target.get("host"), self._canary) and target.get("port"):
                    return copy.deepcopy(target["port"])
        return None

    def _header_route(self, route: HeaderRoute, port: Any) -> dict[str, Any]:
        matches = []
        for match in route.match:
            value = {k: v for k, v in (match.get("headerValue") or {}).items() if v}
            matches.append({"headers": {str(match.get("headerName")): value}})
        destination: dict[str, Any] = {"host": self._canary}
        if port is not None:
            destination["port"] = port
        return {
            "name": route.name,
            "match": matches,
            "route": [{"destination": destination, "weight": 100}],
        }

    def _ordered(self, http: list[dict[str, Any]]) -> list[dict[str, Any]]:
        managed = [r for name in self._managed for r in http if r.get("name") == name]
        return managed + [r for r in http if r.get("name") not in self._managed]

    def set_header_route(self, route: HeaderRoute) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = self._http(vs)
            port = self._canary_port(ref, http)
            http = [r for r in http if r.get("name") != route.name]
            if route.match:
                http.append(self._header_route(route, port))
            self._write(vs, self._ordered(http))

    def remove_managed_routes(self) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = [r for r in self._http(vs) if r.get("name") not in self._managed]
            self._write(vs, http)
