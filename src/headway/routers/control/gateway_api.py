"""Gateway API traffic routing: HTTPRoute backendRef weights, as the Argo Rollouts plugin sets them.

Checked against `argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi` (`pkg/plugin/
httproute.go` `setHTTPRouteWeight`, `pkg/plugin/labels.go`, `internal/defaults`). The Rollout
names the routes under `trafficRouting.plugins["argoproj-labs/gatewayAPI"]`: `httpRoute: NAME`
or `httpRoutes: [{name: NAME}]`, in `namespace` (default: the Rollout's).

Setting a weight reads each HTTPRoute and, in every rule except the rollout's managed header
rules (a rule named after a `managedRoutes` entry, or whose only backendRef is the canary),
writes `weight: W` on each backendRef named after the canary Service and `weight: 100-W` on
each named after the stable one. A route where either is missing is an error. The route gets
the label `rollouts.argoproj.io/gatewayapi-canary: in-progress` while the weight is above 0
and loses it at 0. The object is written back whole (a PUT).

A weighted experiment step (`additional` destinations, plugin `pkg/plugin/experiment.go`
`HandleExperiment`, since v0.6.0): in the first rule holding a backendRef of the stable or the
canary, each template's Service is added as `{name, namespace: <the Rollout's>, port, weight}`,
its port the Service's port named `http`, else its first port (8080 without ports). Refs of
Services the previous reconcile sent traffic to (`status.canary.weights.additional`) and that
are no longer wanted are removed when the experiment ends or is aborted; other backendRefs are
never touched (plugin fix #204). Three deliberate differences: the stable gets `100 - W - the
templates' weights` (the plugin subtracts only the templates', so with W > 0 the relative
weights add up to more than 100 and every share is smaller than the Rollout's status says),
the canary and stable keep the step's weights in the reconcile that removes the templates (the
plugin writes 0/100 for that one reconcile), and a template Service that cannot be read is an
error (the plugin skips it, so the template gets no traffic while the status says it does).

The plugin reports every weight as verified without looking; `verify_weight` here reads the
routes back, the templates' weights included.

A header route (`setHeaderRoute`, plugin `setHTTPHeaderRoute`) appends to each HTTPRoute that
takes header routes (`httpRoute: NAME` does; an `httpRoutes` entry when `useHeaderRoutes: true`) a
rule sending matching requests to the canary: `backendRefs: [{group: "", kind: Service, name:
CANARY, port: <the canary ref's port>}]`, the filters of the rule holding both the stable and
the canary backendRef copied, and one match per match of that rule (its `path` and
`queryParams`, with `headers` from the step: `exact` as Exact, `prefix` as the regular
expression `PREFIX.*`, `regex` as RegularExpression). The rule's index is recorded in the
ConfigMap `configMap` (default `argo-gatewayapi-configmap`, in `namespace`), key
`httpManagedRoutes`: JSON `{route name: {HTTPRoute: index}}`, which is how the plugin later
finds the rule to delete (a step without `match`, and `remove_managed_routes` at the end or
abort, delete it and shift the later indexes). Two deliberate differences: a rule already
recorded is replaced rather than appended again (the controller re-applies a step's routes),
and when the base rule has no `matches` the header rule gets one match of just the headers
(the plugin writes none, which makes a second catch-all rule that never matches).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import (
    create_object,
    read_object,
    read_object_or_none,
    replace_object,
)
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
)

__all__ = ["HTTP_ROUTE_API", "IN_PROGRESS_LABEL", "PLUGIN_NAME", "GatewayAPIReconciler"]

PLUGIN_NAME = "argoproj-labs/gatewayAPI"
HTTP_ROUTE_API = "gateway.networking.k8s.io/v1"
IN_PROGRESS_LABEL = ("rollouts.argoproj.io/gatewayapi-canary", "in-progress")
DEFAULT_CONFIG_MAP = "argo-gatewayapi-configmap"
MANAGED_ROUTES_KEY = "httpManagedRoutes"
ManagedRouteMap = dict[str, dict[str, int]]  # managed route -> HTTPRoute -> rule index


class GatewayAPIReconciler:
    type_name = "RPCPlugin"

    def __init__(
        self,
        cluster: Cluster,
        *,
        namespace: str,
        http_routes: Sequence[str],
        stable_service: str,
        canary_service: str,
        managed_routes: Sequence[str] = (),
        config_map: str = DEFAULT_CONFIG_MAP,
        rollout_namespace: str = "",
        previous_additional: Sequence[str] = (),
        header_routes: Sequence[str] | None = None,
    ) -> None:
        if not http_routes:
            raise TrafficRoutingError(
                f"trafficRouting.plugins[{PLUGIN_NAME}]: set httpRoute or httpRoutes"
            )
        self._cluster = cluster
        self._namespace = namespace
        self._routes = list(http_routes)
        # the routes that take header rules (the plugin's useHeaderRoutes); default: all
        self._header_routes = list(http_routes if header_routes is None else header_routes)
        self._stable = stable_service
        self._canary = canary_service
        self._managed = set(managed_routes)
        self._config_map = config_map or DEFAULT_CONFIG_MAP
        self._rollout_namespace = rollout_namespace or namespace
        self._previous_additional = frozenset(previous_additional)

    def _read(self, name: str) -> Obj:
        return read_object(
            self._cluster,
            api_version=HTTP_ROUTE_API,
            kind="HTTPRoute",
            name=name,
            namespace=self._namespace,
        )

    def _weighted_refs(self, route: Obj) -> list[dict[str, Any]]:
        """The backendRefs of every rule the weight applies to (not the managed ones)."""
        refs: list[dict[str, Any]] = []
        for rule in (route.get("spec") or {}).get("rules") or []:
            backend_refs = rule.get("backendRefs") or []
            canary_only = len(backend_refs) == 1 and backend_refs[0].get("name") == self._canary
            if rule.get("name") in self._managed or canary_only:
                continue
            refs.extend(backend_refs)
        return refs

    def _set_route_weight(
        self, name: str, desired_weight: int, additional: Sequence[WeightDestination]
    ) -> None:
        current = self._read(name)
        desired = copy.deepcopy(current)
        stable_weight = max(0, 100 - desired_weight - sum(d.weight for d in additional))
        found = {self._canary: False, self._stable: False}
        for ref in self._weighted_refs(desired):
            if ref.get("name") == self._canary:
                ref["weight"], found[self._canary] = desired_weight, True
            elif ref.get("name") == self._stable:
                ref["weight"], found[self._stable] = stable_weight, True
        if not all(found.values()):
            missing = ", ".join(service for service, seen in found.items() if not seen)
            raise TrafficRoutingError(
                f"HTTPRoute {self._namespace}/{name}: no backendRef {missing}"
            )
        self._place_experiment(desired, additional)
        labels = desired["metadata"].setdefault("labels", {})
        key, value = IN_PROGRESS_LABEL
        if desired_weight > 0:
            labels[key] = value
        else:
            labels.pop(key, None)
        replace_object(self._cluster, current, desired)

    def _experiment_rule(self, route: Obj) -> dict[str, Any]:
        """The rule the plugin puts experiment Services in: the first naming stable or canary
        (an empty one when none does; setting a weight refuses such a route first)."""
        services = (self._stable, self._canary)
        rules = (route.get("spec") or {}).get("rules") or []
        for rule in rules:
            if any(ref.get("name") in services for ref in rule.get("backendRefs") or []):
                chosen: dict[str, Any] = rule
                return chosen
        return {}

    def _place_experiment(self, route: Obj, additional: Sequence[WeightDestination]) -> None:
        """Give each template its weight in the experiment rule, appending the refs it lacks,
        and drop the refs of templates the previous reconcile routed to and this one does not."""
        rule = self._experiment_rule(route)
        wanted = {d.service_name: d.weight for d in additional}
        kept: list[dict[str, Any]] = []
        for ref in rule.get("backendRefs") or []:
            ref_name = str(ref.get("name"))
            if ref_name in wanted:
                ref["weight"] = wanted.pop(ref_name)
            elif ref_name in self._previous_additional:
                continue  # an ended experiment's template
            kept.append(ref)
        for service_name, weight in wanted.items():
            kept.append(self._experiment_ref(service_name, weight))
        rule["backendRefs"] = kept

    def _experiment_ref(self, service_name: str, weight: int) -> dict[str, Any]:
        service = read_object_or_none(
            self._cluster,
            api_version="v1",
            kind="Service",
            name=service_name,
            namespace=self._rollout_namespace,
        )
        if service is None:
            raise TrafficRoutingError(
                f"experiment template Service {self._rollout_namespace}/{service_name} not "
                "found: it cannot be given its weight in the HTTPRoute"
            )
        return {
            "name": service_name,
            "namespace": self._rollout_namespace,
            "port": _service_port(service),
            "weight": weight,
        }

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        for name in self._routes:
            self._set_route_weight(name, desired_weight, additional)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        templates = {d.service_name: d.weight for d in additional}
        stable_weight = max(0, 100 - desired_weight - sum(templates.values()))
        expected = {self._canary: desired_weight, self._stable: stable_weight}
        for name in self._routes:
            route = self._read(name)
            for ref in self._weighted_refs(route):
                wanted = expected.get(str(ref.get("name")))
                if wanted is not None and ref.get("weight") != wanted:
                    return False
            placed = {
                str(ref.get("name")): ref.get("weight")
                for ref in self._experiment_rule(route).get("backendRefs") or []
            }
            if any(placed.get(service) != weight for service, weight in templates.items()):
                return False
        return True

    # ---- header routes ----------------------------------------------------------------------

    def _read_managed(self) -> tuple[Obj | None, ManagedRouteMap]:
        config_map = read_object_or_none(
            self._cluster,
            api_version="v1",
            kind="ConfigMap",
            name=self._config_map,
            namespace=self._namespace,
        )
        raw = ((config_map or {}).get("data") or {}).get(MANAGED_ROUTES_KEY) or "{}"
        try:
            managed = json.loads(raw)
        except ValueError:
            managed = None
        if not isinstance(managed, dict):
            where = f"ConfigMap {self._namespace}/{self._config_map}"
            raise TrafficRoutingError(f"{where}: data.{MANAGED_ROUTES_KEY} is not a JSON object")
        return config_map, managed

    def _write_managed(self, config_map: Obj | None, managed: ManagedRouteMap) -> None:
        data = {MANAGED_ROUTES_KEY: json.dumps(managed, sort_keys=True)}
        if config_map is None:
            meta = {"name": self._config_map, "namespace": self._namespace}
            create_object(
                self._cluster,
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data},
            )
            return
        desired = dict(config_map, data=dict(config_map.get("data") or {}, **data))
        replace_object(self._cluster, config_map, desired)

    def _header_rule(self, rules: list[dict[str, Any]], route: HeaderRoute, name: str) -> Obj:
        base = next(
            (
                r
                for r in rules
                if {self._canary, self._stable}
                <= {b.get("name") for b in r.get("backendRefs") or []}
            ),
            None,
        )
        if base is None:
            raise TrafficRoutingError(
                f"HTTPRoute {self._namespace}/{name}: no rule has both backendRefs "
                f"{self._stable} and {self._canary}"
            )
        canary_ref = next(b for b in base["backendRefs"] if b.get("name") == self._canary)
        headers = [_header_match(match, route.name) for match in route.match]
        matches = []
        for match in base.get("matches") or [{}]:
            kept = {k: copy.deepcopy(match[k]) for k in ("path", "queryParams") if k in match}
            matches.append({**kept, "headers": headers})
        backend: dict[str, Any] = {"group": "", "kind": "Service", "name": self._canary}
        if "port" in canary_ref:
            backend["port"] = canary_ref["port"]
        rule: dict[str, Any] = {"matches": matches, "backendRefs": [backend]}
        if base.get("filters"):
            rule["filters"] = copy.deepcopy(base["filters"])
        return rule

    def set_header_route(self, route: HeaderRoute) -> None:
        if not route.match:
            self._remove([route.name])
            return
        config_map, managed = self._read_managed()
        for name in self._header_routes:
            current = self._read(name)
            desired = copy.deepcopy(current)
            rules = desired.setdefault("spec", {}).setdefault("rules", [])
            rule = self._header_rule(rules, route, name)
            index = managed.get(route.name, {}).get(name)
            if index is not None and index < len(rules):
                rules[index] = rule
            else:
                rules.append(rule)
                managed.setdefault(route.name, {})[name] = len(rules) - 1
            replace_object(self._cluster, current, desired)
        self._write_managed(config_map, managed)

    def _remove(self, names: Sequence[str]) -> None:
        config_map, managed = self._read_managed()
        if not any(n in managed for n in names):
            return
        for name in self._header_routes:
            current = self._read(name)
            desired = copy.deepcopy(current)
            rules = (desired.get("spec") or {}).get("rules") or []
            for route_name in names:
                index = managed.get(route_name, {}).pop(name, None)
                if index is None or index >= len(rules):
                    continue
                del rules[index]
                for others in managed.values():
                    if others.get(name, -1) > index:
                        others[name] -= 1
            replace_object(self._cluster, current, desired)
        self._write_managed(config_map, {k: v for k, v in managed.items() if v})

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("Gateway API", route)

    def remove_managed_routes(self) -> None:
        """Delete the header rules of every `managedRoutes` entry this plugin recorded."""
        self._remove(sorted(self._managed))


def _header_match(match: Mapping[str, Any], route: str) -> dict[str, Any]:
    """One step `match` entry as a Gateway API header match, as the plugin converts it."""
    value = match.get("headerValue") or {}
    name = str(match.get("headerName"))
    if value.get("exact"):
        return {"name": name, "type": "Exact", "value": str(value["exact"])}
    if value.get("prefix"):
        return {"name": name, "type": "RegularExpression", "value": f"{value['prefix']}.*"}
    if value.get("regex"):
        return {"name": name, "type": "RegularExpression", "value": str(value["regex"])}
    raise TrafficRoutingError(
        f"setHeaderRoute '{route}': header {name} needs exact, prefix or regex"
    )


def _service_port(service: Obj) -> int:
    """The port the plugin gives an experiment Service's backendRef: the one named `http`,
    else the first, else 8080."""
    ports = [p for p in (service.get("spec") or {}).get("ports") or [] if isinstance(p, Mapping)]
    named = [p for p in ports if p.get("name") == "http"]
    chosen = (named or ports or [{"port": 8080}])[0]
    return int(chosen.get("port") or 8080)
