"""Reading a canary's step list: the weight, scale and header routes in force at a step."""

from __future__ import annotations

import math
from collections.abc import Sequence

from headway.model.rollout_steps import CanaryStep, SetCanaryScale
from headway.rollout.plan import HeaderRoute, MirrorRoute

__all__ = [
    "canary_scale_at",
    "header_routes_at",
    "mirror_routes_at",
    "previous_set_weight",
    "scale_replicas",
    "set_weight_at",
    "step_label",
    "unnamed_routes",
]

def set_weight_at(steps: Sequence[CanaryStep], index: int) -> int:
    """The weight the steps have set before reaching `index` (100 past the last step)."""
    if index >= len(steps):
        return 100
    weight = 0
    for step in steps[: index + 1]:
        if step.set_weight is not None:
            weight = step.set_weight
    return weight


def previous_set_weight(steps: Sequence[CanaryStep], index: int) -> int:
    """The weight set by the last setWeight step strictly before `index`."""
    weight = 0
    for step in steps[: min(index, len(steps))]:
        if step.set_weight is not None:
            weight = step.set_weight
    return weight


def canary_scale_at(steps: Sequence[CanaryStep], index: int) -> SetCanaryScale | None:
    """The setCanaryScale in force at `index` (a setWeight after it does not reset it)."""
    found: SetCanaryScale | None = None
    for step in steps[: min(index + 1, len(steps))]:
        if step.set_canary_scale is not None:
            found = step.set_canary_scale
    return found


def scale_replicas(scale: SetCanaryScale | None, spec_replicas: int) -> int | None:
    if scale is None or scale.match_traffic_weight:
        return None
    if scale.replicas is not None:
        return scale.replicas
    if scale.weight is not None:
        return math.ceil(spec_replicas * scale.weight / 100)
    return None


def header_routes_at(steps: Sequence[CanaryStep], index: int) -> tuple[HeaderRoute, ...]:
    """The header route of every name the steps use, as it stands at `index`: set by the
    last step up to `index` that names it, else removed (no match). Replaying them on each
    reconcile puts a route edited away by hand back, and takes away one no step up to
    `index` set: a route the old revision's later step set must not send users to a new
    canary whose steps restarted before it (`mirror_routes_at` does the same)."""
    routes: dict[str, HeaderRoute] = {}
    for position, step in enumerate(steps):
        route = step.set_header_route
        if route is None or not route.name:
            continue
        if position > index:
            routes.setdefault(route.name, HeaderRoute(route.name, ()))
            continue
        routes[route.name] = HeaderRoute(route.name, tuple(route.match))
    return tuple(routes.values())


def mirror_routes_at(steps: Sequence[CanaryStep], index: int) -> tuple[MirrorRoute, ...]:
    """The mirror route of every name the steps use, as it stands at `index`: set by the
    last step up to `index` that names it, else removed (no match). Argo sets only the
    current step's; replaying them all writes the same routes, again after a restart or a
    hand edit, and takes away a route no step up to `index` set (a newer revision restarting
    the steps before the mirror step, say)."""
    routes: dict[str, MirrorRoute] = {}
    for position, step in enumerate(steps):
        route = step.set_mirror_route
        if route is None or not route.name:
            continue
        if position > index:
            routes.setdefault(route.name, MirrorRoute(route.name, ()))
            continue
        percentage = 100 if route.percentage is None else route.percentage
        routes[route.name] = MirrorRoute(route.name, tuple(route.match), percentage)
    return tuple(routes.values())


def unnamed_routes(steps: Sequence[CanaryStep], managed: Sequence[str]) -> tuple[HeaderRoute, ...]:
    """A removal (no match) for each `managedRoutes` name no step uses: a route an earlier
    version of the steps set, before an edit dropped its step, must not outlive it."""
    named = {
        route.name
        for step in steps
        for route in (step.set_header_route, step.set_mirror_route)
        if route is not None
    }
    return tuple(HeaderRoute(name, ()) for name in managed if name not in named)


def step_label(step: CanaryStep) -> str:
    """A one-line description: `setWeight: 20`, `pause: 30s`, `pause`, `analysis: a, b`."""
    if step.set_weight is not None:
        return f"setWeight: {step.set_weight}"
    if step.pause is not None:
        duration = step.pause.duration
        return "pause" if duration is None else f"pause: {duration:g}s"
    if step.analysis is not None:
        return "analysis: " + ", ".join(t.template_name for t in step.analysis.templates)
    if step.set_canary_scale is not None:
        scale = step.set_canary_scale
        if scale.match_traffic_weight:
            return "setCanaryScale: matchTrafficWeight"
        if scale.replicas is not None:
            return f"setCanaryScale: {scale.replicas} replicas"
        return f"setCanaryScale: {scale.weight}%"
    if step.set_header_route is not None:
        return f"setHeaderRoute: {step.set_header_route.name}"
    if step.set_mirror_route is not None:
        return f"setMirrorRoute: {step.set_mirror_route.name}"
    return step.kind
