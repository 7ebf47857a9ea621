"""Traefik traffic routing: the weights of a weighted TraefikService, as Argo Rollouts sets them.

Checked against argo-rollouts `rollout/trafficrouting/traefik/traefik.go`. The user owns a
TraefikService (`traefik.io/v1alpha1` by default, Argo's `--traefik-api-group`) named by
`trafficRouting.traefik.weightedTraefikServiceName`, whose `spec.weighted.services` lists
the stable and canary Services by `name`. Setting a weight writes `weight: W` on the canary
entry and `weight: 100-W` on the stable one, leaves every other field and entry alone, and
writes the whole object back (a PUT). Missing `spec.weighted.services`, or no entry for
either Service, is an error naming what is missing.

Traefik has no header or mirror routes here (Argo's reconciler ignores them; validation
rejects the steps). `verify_weight` reads the object back, where Argo returns "cannot tell".
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import read_object, replace_object
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
    refuse_additional,
)

__all__ = ["TRAEFIK_API", "TraefikReconciler"]

TRAEFIK_API = "traefik.io/v1alpha1"


class TraefikReconciler:
    type_name = "Traefik"

    def __init__(
        self,
        cluster: Cluster,
        *,
        namespace: str,
        traefik_service: str,
        stable_service: str,
        canary_service: str,
        api_version: str = TRAEFIK_API,
    ) -> None:
        self._cluster = cluster
        self._namespace = namespace
        self._name = traefik_service
        self._stable = stable_service
        self._canary = canary_service
        self._api = api_version

    def _read(self) -> Obj:
        return read_object(
            self._cluster,
            api_version=self._api,
            kind="TraefikService",
            name=self._name,
            namespace=self._namespace,
        )

    def _services(self, traefik_service: Obj) -> list[dict[str, Any]]:
        weighted = (traefik_service.get("spec") or {}).get("weighted") or {}
        services = weighted.get("services")
        if not isinstance(services, list):
            raise TrafficRoutingError(
                f"TraefikService {self._name}: spec.weighted.services was not found"
            )
        return services

    def _entry(self, services: list[dict[str, Any]], service: str, role: str) -> dict[str, Any]:
        for entry in services:
            if not isinstance(entry, dict) or "name" not in entry:
                raise TrafficRoutingError(
                    f"TraefikService {self._name}: a spec.weighted.services entry has no name"
                )
            if entry["name"] == service:
                return entry
        raise TrafficRoutingError(
            f"TraefikService {self._name}: the {role} Service '{service}' is not in "
            "spec.weighted.services"
        )

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        refuse_additional("Traefik", additional)  # a split it cannot make must fail
        current = self._read()
        desired = copy.deepcopy(current)
        services = self._services(desired)
        self._entry(services, self._canary, "canary")["weight"] = desired_weight
        self._entry(services, self._stable, "stable")["weight"] = 100 - desired_weight
        replace_object(self._cluster, current, desired)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        services = self._services(self._read())
        canary = self._entry(services, self._canary, "canary").get("weight")
        stable = self._entry(services, self._stable, "stable").get("weight")
        return canary == desired_weight and stable == 100 - desired_weight

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': the Traefik router has no header routes"
        )

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("Traefik", route)

    def remove_managed_routes(self) -> None:
        """Traefik has no managed routes: nothing to remove."""
