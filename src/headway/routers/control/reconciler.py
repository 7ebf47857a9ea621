"""The control-plane side of traffic routing: what the Rollout controller asks of a router.

Shaped after Argo Rollouts' `TrafficRoutingReconciler` (`rollout/trafficrouting/
trafficroutingutil.go`): bind the canary and stable pod-template hashes, set the canary
weight (and the shares of `additional` destinations: a weighted experiment's templates, taken
from the stable's share), set or remove a header route or a mirror route, verify the weight
took effect, remove every route the rollout manages, and name the router. A reconciler edits
configuration objects through the `Cluster` (an Istio VirtualService, say); the data plane
that realizes them (the local mesh's embedded router, HAProxy) is
`headway.routers.dataplane.protocol.TrafficRouter`, a different interface. Methods raise
`TrafficRoutingError` with a message a user can act on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from headway.rollout.plan import HeaderRoute, MirrorRoute, WeightDestination

__all__ = [
    "HeaderRoute",
    "MirrorRoute",
    "TrafficRoutingError",
    "TrafficRoutingReconciler",
    "WeightDestination",
    "mirror_refused",
    "refuse_additional",
]


class TrafficRoutingError(Exception):
    """The router's configuration could not be changed; the message says which and why."""


def mirror_refused(router: str, route: MirrorRoute) -> TrafficRoutingError:
    """The error of a router that cannot mirror. Argo's reconcilers other than Istio return
    nil from `SetMirrorRoute`, so the step passes and nothing is mirrored; Headway refuses
    instead (validation says so first), since a mirror that silently did nothing would let a
    canary pass a shadow-traffic step it never saw."""
    return TrafficRoutingError(
        f"setMirrorRoute '{route.name}': the {router} router cannot mirror traffic "
        "(only Istio can)"
    )


def refuse_additional(router: str, additional: Sequence[WeightDestination]) -> None:
    """For routers that cannot split to more than stable and canary: a weighted experiment
    must fail loudly here, not look routed (validation refuses such a Rollout first)."""
    if additional:
        services = ", ".join(d.service_name for d in additional)
        raise TrafficRoutingError(
            f"the {router} router cannot send traffic to experiment templates ({services})"
        )


class TrafficRoutingReconciler(Protocol):
    @property
    def type_name(self) -> str:
        """The router, as Argo names it (`Istio`)."""
        ...

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Bind the router's canary and stable (and additional destinations) to these
        pod-template hashes (Istio's DestinationRule subsets); called before `set_weight`.
        Most routers route by Service and do nothing here."""
        ...

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Send `desired_weight` percent to the canary, each additional destination its
        weight, and the rest to the stable."""
        ...

    def set_header_route(self, route: HeaderRoute) -> None:
        """Add or replace the managed route `route.name`; with no match, remove it."""
        ...

    def set_mirror_route(self, route: MirrorRoute) -> None:
        """Add or replace the managed mirror route `route.name`; with no match, remove it.
        Only Istio mirrors; the others raise, naming themselves (validation refuses first)."""
        ...

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        """Whether the router applies `desired_weight` now; None when it cannot tell."""
        ...

    def remove_managed_routes(self) -> None:
        """Remove every route listed in `trafficRouting.managedRoutes`."""
        ...
