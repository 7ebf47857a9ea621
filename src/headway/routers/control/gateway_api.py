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

The plugin reports every weight as verified without looking; `verify_weight` here reads the
routes back. Header routes through the plugin (extra HTTPRoute rules) are not written by
Headway yet: `setHeaderRoute` is refused.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute
from headway.routers.control.objects import read_object, replace_object
from headway.routers.control.reconciler import TrafficRoutingError

__all__ = ["HTTP_ROUTE_API", "IN_PROGRESS_LABEL", "PLUGIN_NAME", "GatewayAPIReconciler"]

PLUGIN_NAME = "argoproj-labs/gatewayAPI"
HTTP_ROUTE_API = "gateway.networking.k8s.io/v1"
IN_PROGRESS_LABEL = ("rollouts.argoproj.io/gatewayapi-canary", "in-progress")


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
    ) -> None:
        if not http_routes:
            raise TrafficRoutingError(
                f"trafficRouting.plugins[{PLUGIN_NAME}]: set httpRoute or httpRoutes"
            )
        self._cluster = cluster
        self._namespace = namespace
        self._routes = list(http_routes)
        self._stable = stable_service
        self._canary = canary_service
        self._managed = set(managed_routes)

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

    def _set_route_weight(self, name: str, desired_weight: int) -> None:
        current = self._read(name)
        desired = copy.deepcopy(current)
        found = {self._canary: False, self._stable: False}
        for ref in self._weighted_refs(desired):
            if ref.get("name") == self._canary:
                ref["weight"], found[self._canary] = desired_weight, True
            elif ref.get("name") == self._stable:
                ref["weight"], found[self._stable] = 100 - desired_weight, True
        if not all(found.values()):
            missing = ", ".join(service for service, seen in found.items() if not seen)
            raise TrafficRoutingError(
                f"HTTPRoute {self._namespace}/{name}: no backendRef {missing}"
            )
        labels = desired["metadata"].setdefault("labels", {})
        key, value = IN_PROGRESS_LABEL
        if desired_weight > 0:
            labels[key] = value
        else:
            labels.pop(key, None)
        replace_object(self._cluster, current, desired)

    def update_hash(self, canary_hash: str, stable_hash: str) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(self, desired_weight: int) -> None:
        for name in self._routes:
            self._set_route_weight(name, desired_weight)

    def verify_weight(self, desired_weight: int) -> bool | None:
        expected = {self._canary: desired_weight, self._stable: 100 - desired_weight}
        for name in self._routes:
            for ref in self._weighted_refs(self._read(name)):
                wanted = expected.get(str(ref.get("name")))
                if wanted is not None and ref.get("weight") != wanted:
                    return False
        return True

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': header routes through the Gateway API plugin are "
            "not supported by Headway yet"
        )

    def remove_managed_routes(self) -> None:
        """No header rules are written to HTTPRoutes yet: nothing to remove."""
