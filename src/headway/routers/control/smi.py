"""SMI traffic routing: the TrafficSplit a Rollout owns, as Argo Rollouts writes it.

Checked against argo-rollouts `rollout/trafficrouting/smi/smi.go`. The TrafficSplit is named
`trafficRouting.smi.trafficSplitName` (default: the Rollout's name), lives in the Rollout's
namespace and is owned by it (a controller reference). Its spec is
`{service: ROOT, backends: [{service: CANARY, weight: W}, {service: STABLE, weight: 100-W}]}`,
canary first; ROOT is `smi.rootService`, else the stable Service. A weighted experiment's
templates (`additional` destinations) go between canary and stable, each
`{service: <template Service>, weight}`, and the stable gets what is left (Argo's
`trafficSplitV1Alpha1` and its siblings, `rollout/trafficrouting/smi/smi.go`). Argo's default
API version
is `split.smi-spec.io/v1alpha1`, whose `weight` is a Kubernetes quantity and so travels as a
string (`"30"`); v1alpha2 and v1alpha3 write an integer.

A missing TrafficSplit is created; an existing one the Rollout does not own is refused (Argo
does the same), otherwise its spec is replaced. SMI has no header or mirror routes: a
`setHeaderRoute` here is refused (validation rejects it before it gets this far).
`verify_weight` reads the TrafficSplit back (Argo does not verify SMI at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import (
    RolloutIdentity,
    create_object,
    read_object_or_none,
    replace_object,
)
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
)

__all__ = ["SMI_API_VERSIONS", "SMIReconciler"]

SMI_API_VERSIONS = (
    "split.smi-spec.io/v1alpha1",
    "split.smi-spec.io/v1alpha2",
    "split.smi-spec.io/v1alpha3",
)


class SMIReconciler:
    type_name = "SMI"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        stable_service: str,
        canary_service: str,
        root_service: str = "",
        traffic_split_name: str = "",
        api_version: str = SMI_API_VERSIONS[0],
    ) -> None:
        if api_version not in SMI_API_VERSIONS:
            raise TrafficRoutingError(f"Unsupported TrafficSplit API version '{api_version}'")
        self._cluster = cluster
        self._rollout = rollout
        self._stable = stable_service
        self._canary = canary_service
        self._root = root_service or stable_service
        self._name = traffic_split_name or rollout.name
        self._api = api_version

    def _weight(self, value: int) -> int | str:
        return str(value) if self._api.endswith("v1alpha1") else value

    def desired_spec(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> dict[str, Any]:
        """The TrafficSplit spec for `desired_weight` percent to the canary and each
        additional destination's weight to its Service."""
        stable = 100 - desired_weight - sum(d.weight for d in additional)
        return {
            "service": self._root,
            "backends": [
                {"service": self._canary, "weight": self._weight(desired_weight)},
                *({"service": d.service_name, "weight": self._weight(d.weight)}
                  for d in additional),
                {"service": self._stable, "weight": self._weight(stable)},
            ],
        }

    def _read(self) -> Obj | None:
        return read_object_or_none(
            self._cluster,
            api_version=self._api,
            kind="TrafficSplit",
            name=self._name,
            namespace=self._rollout.namespace,
        )

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        spec = self.desired_spec(desired_weight, additional)
        current = self._read()
        if current is None:
            metadata = {
                "name": self._name,
                "namespace": self._rollout.namespace,
                "ownerReferences": [self._rollout.owner_reference()],
            }
            split = {"apiVersion": self._api, "kind": "TrafficSplit", "metadata": metadata}
            create_object(self._cluster, {**split, "spec": spec})
            return
        if not self._rollout.owns(current):
            raise TrafficRoutingError(f"Rollout does not own TrafficSplit '{self._name}'")
        replace_object(self._cluster, current, {**current, "spec": spec})

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        current = self._read()
        if current is None:
            return False
        return (current.get("spec") or {}) == self.desired_spec(desired_weight, additional)

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': the SMI router has no header routes"
        )

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("SMI", route)

    def remove_managed_routes(self) -> None:
        """SMI has no managed routes: nothing to remove."""
