"""AWS App Mesh traffic routing: VirtualRouter target weights and VirtualNode hash labels.

Checked against argo-rollouts `rollout/trafficrouting/appmesh/appmesh.go` and
`resource_client.go` (custom resources `appmesh.k8s.aws/v1beta2`, Argo's default):

* Hashes (`UpdateHash`, `updateVirtualNodeWithHash`), before every weight: the stable
  VirtualNode (`virtualNodeGroup.stableVirtualNodeRef`) gets
  `spec.podSelector.matchLabels.rollouts-pod-template-hash` = the stable hash (`stable-hash`
  when there is none yet), then the canary one the canary hash (`canary-hash` when there is
  none or it equals the stable's: App Mesh refuses two nodes with one selector); both get the
  annotation `argo-rollouts.argoproj.io/managed-by-rollouts: <rollout>`.
* Weight W (`SetWeight`, `reconcileVirtualRouter`, `reconcileRoute`): the VirtualService
  `appMesh.virtualService.name` names its VirtualRouter in
  `spec.provider.virtualRouter.virtualRouterRef` (`namespace` defaulting to the
  VirtualService's); in each of its `spec.routes` (only those named in
  `virtualService.routes` when given), the first of `httpRoute`, `tcpRoute`, `http2Route`,
  `grpcRoute` holds `action.weightedTargets`: the target whose `virtualNodeRef` is the stable
  node (in the Rollout's namespace) gets `100-W`, the canary node's `W`, others are kept.
  The VirtualRouter is written only when a weight changed.

Anything missing or of the wrong shape is an error naming the object and field. App Mesh has
no header or mirror routes and no experiment destinations here (Argo's methods do nothing;
validation refuses the steps). `verify_weight` reads the VirtualRouter back where Argo
returns "cannot tell".
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import RolloutIdentity, read_object, replace_object
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
    refuse_additional,
)

__all__ = ["APP_MESH_API", "ROUTE_TYPES", "AppMeshReconciler"]

APP_MESH_API = "appmesh.k8s.aws/v1beta2"
ROUTE_TYPES = ("httpRoute", "tcpRoute", "http2Route", "grpcRoute")
HASH_LABEL = "rollouts-pod-template-hash"
MANAGED_BY = "argo-rollouts.argoproj.io/managed-by-rollouts"


class AppMeshReconciler:
    type_name = "AppMesh"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        virtual_service: str,
        routes: Sequence[str],
        stable_node: str,
        canary_node: str,
        api_version: str = APP_MESH_API,
    ) -> None:
        self._cluster = cluster
        self._rollout = rollout
        self._virtual_service = virtual_service
        self._routes = set(routes)
        self._stable = stable_node
        self._canary = canary_node
        self._api = api_version

    def _read(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return read_object(
            self._cluster,
            api_version=self._api,
            kind=kind,
            name=name,
            namespace=namespace or self._rollout.namespace,
        )

    def _label_node(self, name: str, pod_hash: str) -> None:
        current = self._read("VirtualNode", name)
        desired = copy.deepcopy(current)
        desired["metadata"].setdefault("annotations", {})[MANAGED_BY] = self._rollout.name
        selector = desired.setdefault("spec", {}).setdefault("podSelector", {})
        labels = selector.get("matchLabels") or {}
        selector["matchLabels"] = {**labels, HASH_LABEL: pod_hash}
        replace_object(self._cluster, current, desired)

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        stable_hash = stable_hash or "stable-hash"
        self._label_node(self._stable, stable_hash)
        if canary_hash in ("", stable_hash):
            canary_hash = "canary-hash"  # two nodes may not share one selector
        self._label_node(self._canary, canary_hash)

    def _virtual_router(self) -> Obj:
        service = self._read("VirtualService", self._virtual_service)
        provider = ((service.get("spec") or {}).get("provider") or {}).get("virtualRouter")
        ref = (provider or {}).get("virtualRouterRef") if isinstance(provider, dict) else None
        if not isinstance(ref, dict) or not ref.get("name"):
            raise TrafficRoutingError(
                f"VirtualService {self._virtual_service}: spec.provider.virtualRouter."
                "virtualRouterRef is not set (the VirtualService must use a VirtualRouter)"
            )
        namespace = str(ref.get("namespace") or service["metadata"].get("namespace") or "")
        return self._read("VirtualRouter", str(ref["name"]), namespace)

    def _targets(self, router: Obj) -> list[list[dict[str, Any]]]:
        """The weightedTargets of every route the Rollout steers."""
        name = router["metadata"]["name"]
        routes = (router.get("spec") or {}).get("routes")
        if not isinstance(routes, list):
            raise TrafficRoutingError(f"VirtualRouter {name}: spec.routes: no routes found")
        found = []
        for index, route in enumerate(routes):
            where = f"VirtualRouter {name}: spec.routes[{index}]"
            if not isinstance(route, dict) or not isinstance(route.get("name"), str):
                raise TrafficRoutingError(f"{where}.name: not well-formed")
            if self._routes and route["name"] not in self._routes:
                continue
            kind = next((k for k in ROUTE_TYPES if isinstance(route.get(k), dict)), None)
            if kind is None:
                raise TrafficRoutingError(f"{where}: needs one of {', '.join(ROUTE_TYPES)}")
            targets = (route[kind].get("action") or {}).get("weightedTargets")
            if not isinstance(targets, list):
                raise TrafficRoutingError(f"{where}.{kind}.action.weightedTargets: not well-formed")
            found.append(self._checked(targets, f"{where}.{kind}.action.weightedTargets"))
        return found

    @staticmethod
    def _checked(targets: list[Any], where: str) -> list[dict[str, Any]]:
        for index, target in enumerate(targets):
            ref = target.get("virtualNodeRef") if isinstance(target, dict) else None
            weight = target.get("weight") if isinstance(target, dict) else None
            if not isinstance(ref, dict):
                raise TrafficRoutingError(f"{where}[{index}].virtualNodeRef: not well-formed")
            if not isinstance(weight, int) or isinstance(weight, bool):
                raise TrafficRoutingError(f"{where}[{index}].weight: not well-formed")
        return targets

    def _role(self, target: dict[str, Any]) -> str:
        ref = target["virtualNodeRef"]
        if str(ref.get("namespace") or self._rollout.namespace) != self._rollout.namespace:
            return ""
        return {self._stable: "stable", self._canary: "canary"}.get(str(ref.get("name")), "")

    def set_weight(self, desired_weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        refuse_additional("AppMesh", additional)  # Argo ignores them: a split not made
        current = self._virtual_router()
        desired = copy.deepcopy(current)
        weights = {"stable": 100 - desired_weight, "canary": desired_weight}
        for targets in self._targets(desired):
            for target in targets:
                role = self._role(target)
                if role:
                    target["weight"] = weights[role]
        replace_object(self._cluster, current, desired)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        weights = {"stable": 100 - desired_weight, "canary": desired_weight}
        for targets in self._targets(self._virtual_router()):
            for target in targets:
                role = self._role(target)
                if role and target["weight"] != weights[role]:
                    return False
        return True

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': the AppMesh router has no header routes"
        )

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("AppMesh", route)

    def remove_managed_routes(self) -> None:
        """App Mesh has no managed routes: nothing to remove."""
