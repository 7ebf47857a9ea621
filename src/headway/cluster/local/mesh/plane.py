"""The seam between the local mesh and the data-plane routers that realize it.

The mesh (this layer) decides; a data plane (`headway.routers`, a layer above the cluster)
moves the bytes. The runtime is given a `DataPlanes` factory by whoever starts it — the CLI
passes `headway.local_mesh.planes.RouterPlanes()` — so the cluster layer never imports a
router. A `DataPlane` takes the whole desired configuration at once (`PlaneConfig`) and
applies only what changed, in an order that drops no request: endpoints first, then weights,
then header routes, then mirror routes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from headway.cluster.local.mesh.gateway_plan import GatewayRoute
from headway.cluster.local.mesh.plan import HeaderCondition, MeshPlan, ServiceRef

__all__ = [
    "DataPlane",
    "DataPlaneError",
    "DataPlanes",
    "GatewayPlane",
    "PlaneConfig",
    "PlaneDestination",
    "PlaneEndpoint",
    "PlaneMirror",
    "PlaneRoute",
    "destination_label",
    "plane_config",
]

NO_CANARY = ""  # the canary destination's name when the split has a single Service


class DataPlaneError(Exception):
    """A data plane could not start or apply a configuration; the message says why."""


@dataclass(frozen=True)
class PlaneEndpoint:
    host: str
    port: int
    pod_template_hash: str
    pod: str
    # What Istio's telemetry calls the pod: its workload (the ReplicaSet's owner name, e.g.
    # the Rollout), and its `app` and `version` labels; the mesh's Istio-named series use them.
    workload: str = ""
    app: str = ""
    version: str = ""


@dataclass(frozen=True)
class PlaneDestination:
    service: str  # the `service` metric label: the Service name (NAME.NAMESPACE if foreign)
    endpoints: tuple[PlaneEndpoint, ...] = ()


@dataclass(frozen=True)
class PlaneRoute:
    """Requests matching any condition go to the canary destination."""

    name: str
    conditions: tuple[HeaderCondition, ...]


@dataclass(frozen=True)
class PlaneMirror:
    """Requests matching any entry (all of its conditions) are served by the split and
    `percentage` percent of them copied to the canary destination."""

    name: str
    matches: tuple[tuple[HeaderCondition, ...], ...]
    percentage: float


@dataclass(frozen=True)
class PlaneConfig:
    stable: PlaneDestination
    canary: PlaneDestination
    additional: tuple[PlaneDestination, ...]
    canary_weight: int
    additional_weights: tuple[int, ...]
    header_routes: tuple[PlaneRoute, ...]
    mirror_routes: tuple[PlaneMirror, ...] = ()

    def header_names(self) -> tuple[str, ...]:
        return tuple(sorted({c.header for r in self.header_routes for c in r.conditions}))

    def destinations(self) -> tuple[PlaneDestination, ...]:
        return (self.stable, self.canary, *self.additional)


class DataPlane(Protocol):
    @property
    def type_name(self) -> str: ...

    @property
    def address(self) -> tuple[str, int]: ...

    async def start(self) -> None:
        """Listen on the port the plane was created with; `DataPlaneError` or OSError if not."""
        ...

    async def close(self) -> None:
        """Stop listening and release every process and socket."""
        ...

    async def configure(self, config: PlaneConfig) -> None:
        """Apply `config`, changing only what differs from the last one applied."""
        ...


class GatewayPlane(Protocol):
    """One Gateway's listener: hands each request to the router its Host header names."""

    @property
    def address(self) -> tuple[str, int]: ...

    async def start(self) -> None:
        """Listen; OSError when the port is taken."""
        ...

    async def close(self) -> None: ...

    async def configure(self, routes: tuple[GatewayRoute, ...]) -> None:
        """Route by these from the next request on."""
        ...


class DataPlanes(Protocol):
    def unavailable(self, router: str) -> str:
        """Why `router` cannot run on this machine, or "" when it can."""
        ...

    def stop_leftovers(self, work_dir: Path) -> list[int]:
        """Stop router processes a killed runtime left under `work_dir`; their pids."""
        ...

    def create(
        self, *, router: str, port: int, work_dir: Path, labels: Mapping[str, str]
    ) -> DataPlane:
        """A new, not yet started plane; `labels` are added to its metric series."""
        ...

    def create_gateway(self, *, port: int, name: str) -> GatewayPlane:
        """A new, not yet started listener for the Gateway `name` (NAMESPACE/NAME)."""
        ...

    async def start_metrics(self, port: int) -> tuple[str, int]:
        """Serve every plane's series on one `/metrics` endpoint; OSError if `port` is taken."""
        ...

    async def close_metrics(self) -> None: ...


def destination_label(ref: ServiceRef, namespace: str) -> str:
    """`web`, `web.other` for a foreign Service, `web#canary` for a subset of it."""
    label = ref.name if ref.namespace == namespace else f"{ref.name}.{ref.namespace}"
    return f"{label}#{ref.subset}" if ref.subset else label


def plane_config(
    plan: MeshPlan,
    *,
    namespace: str,
    endpoints: Callable[[ServiceRef], tuple[PlaneEndpoint, ...]],
) -> PlaneConfig:
    """The data-plane configuration of `plan`, with the endpoints each Service has now."""

    def destination(ref: ServiceRef) -> PlaneDestination:
        return PlaneDestination(destination_label(ref, namespace), endpoints(ref))

    canary = (
        PlaneDestination(NO_CANARY) if plan.canary is None else destination(plan.canary)
    )
    return PlaneConfig(
        stable=destination(plan.stable),
        canary=canary,
        additional=tuple(destination(s.service) for s in plan.additional),
        canary_weight=plan.canary_weight,
        additional_weights=tuple(s.weight for s in plan.additional),
        header_routes=tuple(PlaneRoute(r.name, r.conditions) for r in plan.header_rules),
        mirror_routes=tuple(
            PlaneMirror(m.name, m.matches, m.percentage) for m in plan.mirror_rules
        ),
    )
