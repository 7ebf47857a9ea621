"""Ambassador (Emissary-ingress) traffic routing: a canary Mapping beside each base Mapping.

Checked against argo-rollouts `rollout/trafficrouting/ambassador/ambassador.go`. For each
Mapping named in `trafficRouting.ambassador.mappings` (in the Rollout's namespace, API
version `getambassador.io/v2` as Argo's default) the Rollout keeps a canary Mapping named
`<base>-canary` (the base name cut to 246 characters first, `buildCanaryMappingName`):

* created on the first weight above 0 (`createCanaryMapping`): a copy of the base Mapping
  with its metadata replaced by just the name and namespace, `spec.service` the base's with
  the first occurrence of the stable Service name replaced by the canary's
  (`buildCanaryService`), and `spec.weight: W`. A base Mapping that sets a weight itself is
  refused, as Argo refuses it: Ambassador would split the base's own share too;
* an existing canary Mapping gets `spec.weight: W` and nothing else (`updateCanaryMapping`);
* at weight 0 it is set to 0 and then deleted (`handleCanaryMapping`); with none there,
  nothing is written.

One deliberate difference: the canary Mapping Headway creates carries the Rollout's
controller reference, so deleting the Rollout mid-canary deletes it too (Argo's stays and
keeps sending W % to a canary Service whose pods are gone). Argo also sleeps 5 s between the
zero weight and the delete; a step function does not block, so both writes happen at once.

Ambassador has no header or mirror routes here (Argo's `SetHeaderRoute` does nothing and
validation rejects the step). `verify_weight` reads the canary Mappings back where Argo
returns "cannot tell".
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.model.traffic_routing import ambassador_canary_mapping
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import (
    RolloutIdentity,
    create_object,
    delete_object,
    read_object_or_none,
    replace_object,
)
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
    refuse_additional,
)

__all__ = ["AMBASSADOR_API", "AmbassadorReconciler", "canary_mapping_name"]

AMBASSADOR_API = "getambassador.io/v2"
canary_mapping_name = ambassador_canary_mapping


class AmbassadorReconciler:
    type_name = "Ambassador"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        mappings: Sequence[str],
        stable_service: str,
        canary_service: str,
        api_version: str = AMBASSADOR_API,
    ) -> None:
        self._cluster = cluster
        self._rollout = rollout
        self._mappings = list(mappings)
        self._stable = stable_service
        self._canary = canary_service
        self._api = api_version

    def _read(self, name: str) -> Obj | None:
        return read_object_or_none(
            self._cluster,
            api_version=self._api,
            kind="Mapping",
            name=name,
            namespace=self._rollout.namespace,
        )

    def canary_mapping(self, base: Obj, desired_weight: int) -> Obj:
        """The canary Mapping cloned from `base` (`buildCanaryMapping`)."""
        meta = base["metadata"]
        spec = copy.deepcopy(base.get("spec") or {})
        service = str(spec.get("service") or "")
        spec["service"] = service.replace(self._stable, self._canary, 1)
        spec["weight"] = desired_weight
        metadata = {
            "name": canary_mapping_name(str(meta["name"])),
            "namespace": meta.get("namespace") or self._rollout.namespace,
            "ownerReferences": [self._rollout.owner_reference()],
        }
        return {
            "apiVersion": base["apiVersion"],
            "kind": "Mapping",
            "metadata": metadata,
            "spec": spec,
        }

    def _create(self, base_name: str, desired_weight: int) -> None:
        base = self._read(base_name)
        if base is None:
            raise TrafficRoutingError(f"Ambassador mapping '{base_name}' not found")
        if (base.get("spec") or {}).get("weight"):
            raise TrafficRoutingError(
                f"Ambassador mapping '{base_name}' can not define weight (spec.weight): the "
                "Rollout sets the weight on its canary Mapping"
            )
        create_object(self._cluster, self.canary_mapping(base, desired_weight))

    def _set_one(self, base_name: str, desired_weight: int) -> None:
        current = self._read(canary_mapping_name(base_name))
        if current is None:
            if desired_weight > 0:
                self._create(base_name, desired_weight)
            return
        desired = copy.deepcopy(current)
        desired.setdefault("spec", {})["weight"] = desired_weight
        replace_object(self._cluster, current, desired)
        if desired_weight == 0:
            delete_object(self._cluster, current)

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(self, desired_weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        """Every base Mapping is handled; the errors are reported together (as Argo's
        `formatErrors`), so one missing Mapping does not hide another's state."""
        refuse_additional("Ambassador", additional)  # Argo ignores them: a split not made
        errors: list[str] = []
        for base_name in self._mappings:
            try:
                self._set_one(base_name, desired_weight)
            except TrafficRoutingError as err:
                errors.append(str(err))
        if len(errors) == 1:
            raise TrafficRoutingError(errors[0])
        if errors:
            raise TrafficRoutingError(
                f"{len(errors)} errors found: " + "".join(f"[{e}]" for e in errors)
            )

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        for base_name in self._mappings:
            canary = self._read(canary_mapping_name(base_name))
            weight: Any = None if canary is None else (canary.get("spec") or {}).get("weight")
            if desired_weight == 0 and canary is not None:
                return False
            if desired_weight > 0 and weight != desired_weight:
                return False
        return True

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': the Ambassador router has no header routes"
        )

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("Ambassador", route)

    def remove_managed_routes(self) -> None:
        """Ambassador has no managed routes: nothing to remove."""
