"""Istio traffic routing: the Rollout controller's edits of a VirtualService, as Argo does them.

Host-level traffic splitting (`trafficRouting.istio.virtualService{name, routes}` with no
DestinationRule): in each named HTTP route (or the only route, or the first unnamed one, when
`routes` is not given) the destination whose host is the stable Service gets `100 - weight`
and the one whose host is the canary Service gets `weight`. The route is rewritten as Argo's
`processRoutes` (`rollout/trafficrouting/istio/istio.go`) does, which matters once a weighted
experiment runs (`additional` destinations): a destination whose host is a template's
Service gets that template's weight, a template with no destination yet gets one appended
(`{destination: {host: SERVICE}, weight: W}`, in Service-name order), the stable gets
`100 - weight - the templates' weights` (never below 0), destinations of the DestinationRule's
`additionalSubsetNames` keep their weight (and take it from the stable's), and every other
destination is removed, which is how an ended experiment's destinations go away. A header
route is a managed HTTP
route `{name, match: [{headers: {NAME: {exact|prefix|regex: VALUE}}}], route: [{destination:
{host: CANARY, port}, weight: 100}]}`; managed routes sit above the user's routes, in
`managedRoutes` order. A VirtualService named `name.namespace` lives in that namespace.

Subset-level splitting (`destinationRule{name, canarySubsetName, stableSubsetName}`): before
the weights move, `update_hash` writes the `rollouts-pod-template-hash` of the canary and the
stable ReplicaSet into the labels of the DestinationRule's two subsets (an empty hash removes
the label), marks the rule with the `argo-rollouts.argoproj.io/managed-by-rollouts`
annotation and, as Argo does, drops every other subset. The split then matches destinations
by `subset`, and a header route goes to `{host: <the rule's host>, subset: <canary subset>}`.
A weighted experiment's templates also get a subset each, named after the template's
Service and labelled with its pod hash (Argo's `UpdateHash`); the split itself still sends
their share to the template's Service by host.

A mirror route (`setMirrorRoute`, Argo's `createMirrorRoute`) is a managed HTTP route `{name,
match, route, mirror, mirrorPercentage: {value: P}}`: its `match` entries are the step's
`method`, `path` (as `uri`) and `headers`; its `route` is a copy of the first split route's
destinations (host, subset, port number, a non-zero weight: the fields Argo's types keep); it
mirrors to the canary Service (or the rule's host and canary subset) at the port of that
route's first destination. Later weights are written into it too, as into the split routes.

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
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import replace_object
from headway.routers.control.reconciler import TrafficRoutingError, WeightDestination

__all__ = ["FIELD_MANAGER", "MANAGED_BY_ANNOTATION", "VIRTUAL_SERVICE_API", "IstioReconciler"]

VIRTUAL_SERVICE_API = "networking.istio.io/v1beta1"
FIELD_MANAGER = "headway-rollouts-controller"
MANAGED_BY_ANNOTATION = "argo-rollouts.argoproj.io/managed-by-rollouts"
HASH_LABEL = "rollouts-pod-template-hash"


def _matches_host(host: Any, service: str) -> bool:
    return isinstance(host, str) and (host == service or host.startswith(f"{service}."))


def _string_match(value: Any) -> dict[str, Any]:
    """An Argo `StringMatch` as written to Istio: its non-empty exact/prefix/regex."""
    source = value if isinstance(value, Mapping) else {}
    return {k: source[k] for k in ("exact", "prefix", "regex") if source.get(k)}


def _istio_match(match: Mapping[str, Any]) -> dict[str, Any]:
    """An Argo `RouteMatch` (method, path, headers) as an Istio HTTPMatchRequest (method,
    uri, headers), with the fields Argo leaves out when empty left out."""
    written: dict[str, Any] = {}
    for argo, istio in (("method", "method"), ("path", "uri")):
        if isinstance(match.get(argo), Mapping):
            written[istio] = _string_match(match[argo])
    headers = match.get("headers")
    if isinstance(headers, Mapping) and headers:
        written["headers"] = {str(k): _string_match(v) for k, v in headers.items()}
    return written


def _kept_destination(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One `route[]` entry as Argo's mirror route copies it: host, subset and port number of
    the destination, and the weight unless it is 0 (its types drop the other fields)."""
    target = entry.get("destination") or {}
    kept: dict[str, Any] = {k: target[k] for k in ("host", "subset") if target.get(k)}
    number = (target.get("port") or {}).get("number") if isinstance(target, Mapping) else None
    if number:
        kept["port"] = {"number": number}
    copied: dict[str, Any] = {"destination": kept}
    if entry.get("weight"):
        copied["weight"] = entry["weight"]
    return copied


def _with_weight(destination: dict[str, Any], weight: int) -> dict[str, Any]:
    """The destination at `weight`; unchanged (no `weight: 0` added) when it already has it,
    as Argo writes only a weight that differs."""
    return destination if destination.get("weight", 0) == weight else dict(destination,
                                                                           weight=weight)


def _short_host(destination: Mapping[str, Any]) -> str:
    """The Service part of a destination's host (Argo's `getHost`: up to the first dot)."""
    host = str((destination.get("destination") or {}).get("host") or "")
    return "" if host.startswith(".") else host.partition(".")[0]


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
        destination_rule: Mapping[str, Any] | None = None,
        rollout_name: str = "",
    ) -> None:
        self._cluster = cluster
        self._namespace = namespace
        self._services = list(virtual_services)
        self._stable = stable_service
        self._canary = canary_service
        self._managed = list(managed_routes)
        self._rule = dict(destination_rule) if destination_rule else None
        self._rollout_name = rollout_name
        self._api: dict[str, str] = {}

    # ---- reading and writing --------------------------------------------------------------

    def _locate(self, ref: Mapping[str, Any]) -> tuple[str, str]:
        name = str(ref.get("name", ""))
        vs_name, _, namespace = name.partition(".")
        return vs_name, namespace or self._namespace

    def _api_version(self, kind: str = "VirtualService") -> str:
        """The served version of networking.istio.io/`kind` (v1beta1 preferred)."""
        if kind not in self._api:
            served = [
                k.api_version
                for k in self._cluster.discovery()
                if k.kind == kind and k.group == "networking.istio.io"
            ]
            preferred = VIRTUAL_SERVICE_API in served or not served
            self._api[kind] = VIRTUAL_SERVICE_API if preferred else served[0]
        return self._api[kind]

    def _read(self, ref: Mapping[str, Any], kind: str = "VirtualService") -> Obj:
        # a VirtualService may be `name.namespace`; the DestinationRule is the Rollout's
        name, namespace = (
            self._locate(ref) if kind == "VirtualService" else (str(ref["name"]), self._namespace)
        )
        try:
            return self._cluster.get(self._api_version(kind), kind, name, namespace)
        except NotFound:
            raise TrafficRoutingError(f"{kind} {namespace}/{name} not found") from None
        except ClusterError as err:
            raise TrafficRoutingError(f"{kind} {namespace}/{name}: {err}") from None

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
        """The split routes: those `routes` names, else the one route the Rollout does not
        manage (or the first unnamed one)."""
        names = [str(n) for n in ref.get("routes") or []]
        if not names:
            own = [i for i, route in enumerate(http) if route.get("name") not in self._managed]
            if len(own) == 1:
                return own
            unnamed = [i for i in own if not http[i].get("name")]
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

    def _role(self, destination: Mapping[str, Any]) -> str:
        """"canary", "stable" or "" for one `route[]` entry: by subset with a DestinationRule
        (Argo: the subset names it), else by host."""
        target = destination.get("destination") or {}
        subset, host = target.get("subset"), target.get("host")
        if self._rule is not None and subset:
            if subset == self._rule.get("canarySubsetName"):
                return "canary"
            if subset == self._rule.get("stableSubsetName"):
                return "stable"
            return ""
        if self._canary and _matches_host(host, self._canary):
            return "canary"
        if self._stable and _matches_host(host, self._stable):
            return "stable"
        return ""

    def _role_names(self) -> dict[str, str]:
        if self._rule is not None:
            return {
                "stable": f"subset '{self._rule.get('stableSubsetName')}'",
                "canary": f"subset '{self._rule.get('canarySubsetName')}'",
            }
        return {"stable": f"Service '{self._stable}'", "canary": f"Service '{self._canary}'"}

    def _additional_subsets(self) -> list[str]:
        names = (self._rule or {}).get("additionalSubsetNames") or []
        return [str(n) for n in names]

    def _weighted(
        self, route: dict[str, Any], weight: int, route_name: str,
        additional: Sequence[WeightDestination] = (),
    ) -> None:
        destinations = route.get("route") or []
        roles = [self._role(d) for d in destinations]
        for role, described in self._role_names().items():
            if role not in roles:
                raise TrafficRoutingError(
                    f"HTTP route '{route_name}' has no destination for {described}"
                )
        route["route"] = self._split_with_templates(destinations, roles, weight, additional)

    def _split_with_templates(
        self, destinations: list[dict[str, Any]], roles: list[str], weight: int,
        additional: Sequence[WeightDestination],
    ) -> list[dict[str, Any]]:
        """The route's destinations as Argo's `processRoutes` leaves them (module docstring)."""
        extra = {d.service_name: d for d in additional}
        kept_subsets = self._additional_subsets()
        stable = 100 - weight - sum(d.weight for d in additional) - sum(
            int(d.get("weight") or 0) for d in destinations
            if (d.get("destination") or {}).get("subset") in kept_subsets
        )
        result: list[dict[str, Any]] = []
        for destination, role in zip(destinations, roles, strict=True):
            host = _short_host(destination)
            if not host or (destination.get("destination") or {}).get("subset") in kept_subsets:
                result.append(destination)
            elif role in ("canary", "stable"):
                wanted = weight if role == "canary" else max(0, stable)
                result.append(_with_weight(destination, wanted))
            elif host in extra:
                result.append(_with_weight(destination, extra.pop(host).weight))
        result += [{"destination": {"host": name}, "weight": extra[name].weight}
                   for name in sorted(extra)]
        return result

    # ---- the protocol -----------------------------------------------------------------------

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = self._http(vs)
            for index in self._weighted_indexes(ref, http):
                name = str(http[index].get("name", ""))
                self._weighted(http[index], desired_weight, name, additional)
            self._write(vs, http)

    def _weighted_indexes(self, ref: Mapping[str, Any], http: list[dict[str, Any]]) -> list[int]:
        """The split routes and the managed mirror routes (Argo keeps a mirror route's copy
        of the split at the current weights). Argo, when `routes` is not given, then weighs
        the mirror routes only and leaves the split where it was; Headway weighs both."""
        indexes = self._route_indexes(ref, http)
        mirrors = [
            i
            for i, route in enumerate(http)
            if route.get("mirror") is not None and route.get("name") in self._managed
        ]
        return indexes + [i for i in mirrors if i not in indexes]

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        for ref in self._services:
            http = self._http(self._read(ref))
            for index in self._route_indexes(ref, http):
                route = http[index].get("route") or []
                roles = [self._role(d) for d in route]
                if route != self._split_with_templates(route, roles, desired_weight, additional):
                    return False
        return True

    def _canary_port(self, ref: Mapping[str, Any], http: list[dict[str, Any]]) -> Any:
        for index in self._route_indexes(ref, http):
            for destination in http[index].get("route") or []:
                target = destination.get("destination") or {}
                if self._role(destination) == "canary" and target.get("port"):
                    return copy.deepcopy(target["port"])
        return None

    def _canary_destination(self) -> dict[str, Any]:
        """Where a header route sends: the canary Service, or the rule's host and canary
        subset."""
        if self._rule is None:
            return {"host": self._canary}
        rule = self._read(self._rule, "DestinationRule")
        host = str((rule.get("spec") or {}).get("host") or "")
        return {"host": host, "subset": str(self._rule.get("canarySubsetName"))}

    def _header_route(self, route: HeaderRoute, port: Any) -> dict[str, Any]:
        matches = []
        for match in route.match:
            value = {k: v for k, v in (match.get("headerValue") or {}).items() if v}
            matches.append({"headers": {str(match.get("headerName")): value}})
        destination = self._canary_destination()
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

    def set_mirror_route(self, route: MirrorRoute) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = [r for r in self._http(vs) if r.get("name") != route.name]
            if route.match:
                http.insert(0, self._mirror_route(ref, http, route))
            self._write(vs, self._ordered(http))

    def _mirror_route(
        self, ref: Mapping[str, Any], http: list[dict[str, Any]], route: MirrorRoute
    ) -> dict[str, Any]:
        split = http[self._route_indexes(ref, http)[0]].get("route") or []
        if not split:
            raise TrafficRoutingError(
                f"setMirrorRoute '{route.name}': the split route has no destinations to copy"
            )
        copied = [_kept_destination(entry) for entry in split]
        mirror = self._canary_destination()
        number = (copied[0]["destination"].get("port") or {}).get("number")
        if number:
            mirror["port"] = {"number": number}
        return {
            "name": route.name,
            "match": [_istio_match(match) for match in route.match],
            "route": copied,
            "mirror": mirror,
            "mirrorPercentage": {"value": route.percentage},
        }

    def remove_managed_routes(self) -> None:
        for ref in self._services:
            vs = self._read(ref)
            http = [r for r in self._http(vs) if r.get("name") not in self._managed]
            self._write(vs, http)

    # ---- subsets ------------------------------------------------------------------------------

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Point the DestinationRule's canary and stable subsets (and one per weighted
        experiment template) at these pod-template hashes (a no-op without a
        DestinationRule). Called before the weights move, as Argo does."""
        if self._rule is None:
            return
        rule = self._read(self._rule, "DestinationRule")
        wanted = {
            str(self._rule.get("canarySubsetName")): canary_hash,
            str(self._rule.get("stableSubsetName")): stable_hash,
            **{d.service_name: d.pod_template_hash for d in additional},
        }
        subsets = []
        for subset in (rule.get("spec") or {}).get("subsets") or []:
            if not isinstance(subset, dict) or subset.get("name") not in wanted:
                continue  # Argo keeps only the subsets it manages
            labels = {k: v for k, v in (subset.get("labels") or {}).items() if k != HASH_LABEL}
            if wanted[subset["name"]]:
                labels[HASH_LABEL] = wanted[subset["name"]]
            subsets.append(dict(subset, labels=labels))
        present = {s["name"] for s in subsets}
        subsets += [{"name": d.service_name, "labels": {HASH_LABEL: d.pod_template_hash}}
                    for d in sorted(additional, key=lambda d: d.service_name)
                    if d.service_name not in present]
        meta = rule["metadata"]
        annotations = dict(meta.get("annotations") or {}, **{
            MANAGED_BY_ANNOTATION: self._rollout_name
        })
        desired = dict(
            rule,
            metadata=dict(meta, annotations=annotations),
            spec=dict(rule.get("spec") or {}, subsets=subsets),
        )
        replace_object(self._cluster, rule, desired)
