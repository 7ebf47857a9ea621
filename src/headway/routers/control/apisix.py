"""APISIX traffic routing: backend weights of an ApisixRoute, header routes as managed copies.

Checked against argo-rollouts `rollout/trafficrouting/apisix/apisix.go`. The user owns the
ApisixRoute `trafficRouting.apisix.route.name` (`apisix.apache.org/v2`, Argo's default) in the
Rollout's namespace; its rules (`spec.http[]`) named in `route.rules` (default: one rule named
like the route) each list the stable and canary Services in `backends[].serviceName`.

* Weight W (`SetWeight`, `processSetWeightRoutes`): the canary backend gets `weight: W`, the
  stable one `weight: 100-W`, in every named rule; the whole object is written back. A rule
  without a `name` before the one looked for, a missing rule, `backends` or backend is an
  error naming it (`GetHttpRoute`, `GetBackends`, `setBackendWeight`).
* Header route (`SetHeaderRoute`, `makeSetHeaderRoute`, `processSetHeaderApisixRoute`): a
  second ApisixRoute named after the managed route, controlled by the Rollout. Created as a
  copy of the user's route (its labels and annotations too, not its server-set fields): in
  each named rule the canary backend at weight 100, the stable backend removed, `priority`
  one above the rule's (0 when unset) so it wins, and `match.exprs` built from the step
  (`setApisixRuleMatch`, `apisixExprs`): per match `{subject: {scope: Header, name: H}, op:
  Equal, value: V}` for `exact`, `op: RegexMatch` for `regex`, and `RegexMatch` of `^P.*` for
  `prefix`. An existing managed route is edited in place (its priority kept); one the
  Rollout does not control is refused. A step without `match` deletes it.
* End or abort (`RemoveManagedRoutes`): each `managedRoutes` ApisixRoute the Rollout
  controls is deleted.

Mirror routes are refused by validation (Argo's `SetMirrorRoute` does nothing here).
`verify_weight` reads the weights back where Argo returns "cannot tell".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import (
    RolloutIdentity,
    create_object,
    delete_object,
    read_object,
    read_object_or_none,
    replace_object,
)
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
    refuse_additional,
)

__all__ = ["APISIX_API", "ApisixReconciler", "apisix_exprs"]

APISIX_API = "apisix.apache.org/v2"
_SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")


def apisix_exprs(match: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `match.exprs` of a header route's matches (`apisixExprs`)."""
    exprs: list[dict[str, Any]] = []
    for entry in match:
        subject = {"scope": "Header", "name": str(entry.get("headerName"))}
        value = entry.get("headerValue") or {}
        if value.get("exact"):
            exprs.append({"subject": dict(subject), "op": "Equal", "value": value["exact"]})
        if value.get("regex"):
            exprs.append({"subject": dict(subject), "op": "RegexMatch", "value": value["regex"]})
        if value.get("prefix"):
            prefix = f"^{value['prefix']}.*"
            exprs.append({"subject": dict(subject), "op": "RegexMatch", "value": prefix})
    return exprs


class ApisixReconciler:
    type_name = "Apisix"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        route: str,
        rules: Sequence[str],
        stable_service: str,
        canary_service: str,
        managed_routes: Sequence[str],
        api_version: str = APISIX_API,
    ) -> None:
        self._cluster = cluster
        self._rollout = rollout
        self._route = route
        self._rules = list(rules) or [route]
        self._stable = stable_service
        self._canary = canary_service
        self._managed = list(managed_routes)
        self._api = api_version

    def _read(self, name: str) -> Obj | None:
        return read_object_or_none(
            self._cluster,
            api_version=self._api,
            kind="ApisixRoute",
            name=name,
            namespace=self._rollout.namespace,
        )

    def _user_route(self) -> Obj:
        return read_object(
            self._cluster,
            api_version=self._api,
            kind="ApisixRoute",
            name=self._route,
            namespace=self._rollout.namespace,
        )

    def _rules_of(self, route: Obj) -> list[dict[str, Any]]:
        """Each rule the Rollout steers, in `rules` order."""
        http = (route.get("spec") or {}).get("http")
        name = route["metadata"]["name"]
        if not isinstance(http, list):
            raise TrafficRoutingError(f"ApisixRoute {name}: spec.http was not found")
        return [self._rule(http, name, wanted) for wanted in self._rules]

    @staticmethod
    def _rule(http: list[Any], route: str, wanted: str) -> dict[str, Any]:
        for index, rule in enumerate(http):
            if not isinstance(rule, dict) or not isinstance(rule.get("name"), str):
                raise TrafficRoutingError(f"ApisixRoute {route}: spec.http[{index}].name not found")
            if rule["name"] == wanted:
                if not isinstance(rule.get("backends"), list):
                    raise TrafficRoutingError(
                        f"ApisixRoute {route}: rule '{wanted}' has no backends"
                    )
                return rule
        raise TrafficRoutingError(f"ApisixRoute {route}: http rule '{wanted}' not found")

    @staticmethod
    def _backend(rule: dict[str, Any], route: str, service: str) -> dict[str, Any]:
        for backend in rule["backends"]:
            if not isinstance(backend, dict) or "serviceName" not in backend:
                raise TrafficRoutingError(
                    f"ApisixRoute {route}: a backend of rule '{rule['name']}' has no serviceName"
                )
            if backend["serviceName"] == service:
                return backend
        raise TrafficRoutingError(
            f"ApisixRoute {route}: rule '{rule['name']}' has no backend '{service}'"
        )

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(self, desired_weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        refuse_additional("APISIX", additional)  # Argo ignores them: a split not made
        current = self._user_route()
        desired = copy.deepcopy(current)
        for rule in self._rules_of(desired):
            self._backend(rule, self._route, self._canary)["weight"] = desired_weight
            self._backend(rule, self._route, self._stable)["weight"] = 100 - desired_weight
        replace_object(self._cluster, current, desired)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        route = self._user_route()
        for rule in self._rules_of(route):
            canary = self._backend(rule, self._route, self._canary).get("weight")
            stable = self._backend(rule, self._route, self._stable).get("weight")
            if (canary, stable) != (desired_weight, 100 - desired_weight):
                return False
        return True

    def _managed_copy(self, name: str) -> Obj:
        """A new managed route: the user's route under `name`, owned by the Rollout."""
        route = copy.deepcopy(self._user_route())
        route.pop("status", None)
        meta = {k: v for k, v in route["metadata"].items() if k not in _SERVER_SET}
        meta["name"] = name
        meta["ownerReferences"] = [self._rollout.owner_reference()]
        return {**route, "metadata": meta}

    def _steer_header_rules(
        self, route: Obj, match: Sequence[Mapping[str, Any]], new: bool
    ) -> None:
        name = route["metadata"]["name"]
        for rule in self._rules_of(route):
            self._backend(rule, name, self._canary)["weight"] = 100
            rule["backends"] = [b for b in rule["backends"] if b.get("serviceName") != self._stable]
            if new:
                rule["priority"] = int(rule.get("priority") or 0) + 1
            rule.setdefault("match", {})["exprs"] = apisix_exprs(match)

    def set_header_route(self, route: HeaderRoute) -> None:
        self._user_route()  # Argo reads the user's route first: a missing one is an error
        current = self._read(route.name)
        if current is not None and not self._rollout.owns(current):
            raise TrafficRoutingError(f"duplicate ApisixRoute '{route.name}' already exists")
        if not route.match:
            if current is not None:
                delete_object(self._cluster, current)
            return
        desired = self._managed_copy(route.name) if current is None else copy.deepcopy(current)
        self._steer_header_rules(desired, route.match, new=current is None)
        if current is None:
            create_object(self._cluster, desired)
        else:
            replace_object(self._cluster, current, desired)

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("APISIX", route)

    def remove_managed_routes(self) -> None:
        for name in self._managed:
            current = self._read(name)
            if current is not None and self._rollout.owns(current):
                delete_object(self._cluster, current)
