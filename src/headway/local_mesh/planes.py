"""Headway's routers as the local mesh's data planes (`cluster.local.mesh_plane.DataPlanes`).

The runtime lives in the cluster layer and may not import a router, so whoever starts it
passes `RouterPlanes()`: it creates an `EmbeddedRouter` or an `HAProxyRouter` per
VirtualService (and a `GatewayListener` per Istio Gateway) and serves all their metrics on one
endpoint (`mesh_metrics`).

A plane applies a new `PlaneConfig` as a diff against the last one it applied, in an order
that drops no request: destinations (endpoints) first, then weights, then header routes, then
mirror routes. HAProxy matches only the header names it was started with, so a header route
on a new name restarts that HAProxy on the same port once (connections in flight at that
moment are cut; its counters start again from zero, which Prometheus' `rate()` treats as a
counter reset). HAProxy cannot mirror (2.6 has no mirroring without an SPOE agent Debian does
not ship), so while a configuration has mirror routes the plane of a `router: haproxy` runtime
runs the embedded router on the same port instead, and HAProxy again once they are gone (each
switch is such a restart).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from headway.cluster.local.kubelet.network import LOOPBACK
from headway.cluster.local.kubelet.processes import process_alive
from headway.cluster.local.mesh.plan import HeaderCondition
from headway.cluster.local.mesh.plane import (
    DataPlane,
    DataPlaneError,
    DataPlanes,
    GatewayPlane,
    PlaneConfig,
    PlaneDestination,
    PlaneMirror,
    PlaneRoute,
)
from headway.local_mesh.gateway_listener import GatewayListener
from headway.routers.dataplane import mesh_metric_dialects
from headway.routers.dataplane.embedded.router import EmbeddedRouter
from headway.routers.dataplane.haproxy.router import HAProxyRouter
from headway.routers.dataplane.mesh_metrics import PlaneSeries, Workload, render_labelled
from headway.routers.dataplane.metrics import MetricsServer
from headway.routers.dataplane.protocol import (
    Destination,
    Endpoint,
    HeaderMatch,
    HeaderRoute,
    MatchKind,
    MirrorRoute,
    RequestMatch,
    RouterError,
    TrafficRouter,
    WeightDestination,
)

__all__ = ["ROUTERS", "RouterPlane", "RouterPlanes", "haproxy_dir", "stop_leftover_routers"]

ROUTERS = ("embedded", "haproxy")
DEFAULT_ROUTE_HEADERS = ("x-canary",)
HAPROXY_FALLBACK = "/usr/sbin/haproxy"
MAX_SOCKET_DIR_LENGTH = 97 - len("unix@/") - len("stable.sock")  # HAProxy's limit, 97 bytes
POINTER_FILE = "haproxy.dir"


def _destination(dest: PlaneDestination) -> Destination:
    endpoints = tuple(Endpoint(e.host, e.port, e.pod_template_hash) for e in dest.endpoints)
    return Destination(dest.service, endpoints)


def _header_match(condition: HeaderCondition) -> HeaderMatch:
    kind = MatchKind(condition.kind)
    # Istio's `regex` must match the whole value (Envoy's safe_regex); the routers search.
    value = f"^(?:{condition.value})$" if kind is MatchKind.REGEX else condition.value
    return HeaderMatch(condition.header, value, kind)


def _header_route(route: PlaneRoute) -> HeaderRoute:
    return HeaderRoute(route.name, tuple(_header_match(c) for c in route.conditions))


def _mirror_route(route: PlaneMirror) -> MirrorRoute:
    matches = tuple(RequestMatch(tuple(_header_match(c) for c in e)) for e in route.matches)
    return MirrorRoute(route.name, matches, route.percentage)


class RouterPlane:
    """One VirtualService's router, configured by diffs."""

    def __init__(
        self,
        *,
        router: str,
        port: int,
        work_dir: Path,
        labels: Mapping[str, str],
        haproxy: str,
        running: Callable[[RouterPlane, bool], None] = lambda plane, alive: None,
    ) -> None:
        self.router = router
        self._running = running
        self.labels = dict(labels)
        self._port = port
        self._work_dir = work_dir
        self._haproxy = haproxy
        self._headers: tuple[str, ...] = DEFAULT_ROUTE_HEADERS
        self._impl: TrafficRouter = self._new_router(router)
        self._destinations: tuple[PlaneDestination, ...] | None = None
        self._weights: tuple[int, tuple[int, ...]] | None = None
        self._routes: dict[str, PlaneRoute] = {}
        self._mirrors: dict[str, PlaneMirror] = {}

    def _new_router(self, kind: str) -> TrafficRouter:
        if kind == "haproxy":
            directory = haproxy_dir(self._work_dir)
            directory.mkdir(parents=True, exist_ok=True)
            return HAProxyRouter(
                work_dir=directory,
                binary=self._haproxy,
                host=LOOPBACK,
                port=self._port,
                route_headers=self._headers,
            )
        return EmbeddedRouter(host=LOOPBACK, port=self._port)

    @property
    def type_name(self) -> str:
        return self._impl.type_name

    @property
    def address(self) -> tuple[str, int]:
        return self._impl.address

    @property
    def router_impl(self) -> TrafficRouter:
        return self._impl

    async def start(self) -> None:
        try:
            await self._impl.start()
        except RouterError as err:
            raise DataPlaneError(str(err)) from err
        self._running(self, True)

    async def close(self) -> None:
        self._running(self, False)
        await self._impl.close()
        stand_in = haproxy_dir(self._work_dir)
        if self.router == "haproxy" and stand_in != self._work_dir:
            shutil.rmtree(stand_in, ignore_errors=True)  # a digest-named dir under /tmp

    async def configure(self, config: PlaneConfig) -> None:
        try:
            await self._switch_for_mirrors(config)
            await self._restart_for_headers(config)
            await self._apply(config)
        except RouterError as err:
            raise DataPlaneError(str(err)) from err

    async def _switch_for_mirrors(self, config: PlaneConfig) -> None:
        """HAProxy cannot mirror: the embedded router serves while there are mirror routes."""
        if self.router != "haproxy":
            return
        wanted = "embedded" if config.mirror_routes else "haproxy"
        if self._impl.type_name != wanted:
            await self._restart_as(wanted)

    async def _restart_for_headers(self, config: PlaneConfig) -> None:
        if self._impl.type_name != "haproxy" or set(config.header_names()) <= set(self._headers):
            return
        self._headers = tuple(sorted({*self._headers, *config.header_names()}))
        await self._restart_as("haproxy")

    async def _restart_as(self, kind: str) -> None:
        await self._impl.close()
        self._impl = self._new_router(kind)
        await self._impl.start()
        self._destinations, self._weights, self._routes, self._mirrors = None, None, {}, {}

    async def _apply(self, config: PlaneConfig) -> None:
        destinations = config.destinations()
        if destinations != self._destinations:
            await self._impl.update_destinations(
                stable=_destination(config.stable),
                canary=_destination(config.canary),
                additional=[_destination(d) for d in config.additional],
            )
            self._destinations = destinations
        weights = (config.canary_weight, config.additional_weights)
        if weights != self._weights:
            additional = [
                WeightDestination(d.service, w)
                for d, w in zip(config.additional, config.additional_weights, strict=True)
            ]
            await self._impl.set_weight(config.canary_weight, additional)
            self._weights = weights
        wanted = {r.name: r for r in config.header_routes}
        for name in [n for n in self._routes if n not in wanted]:
            await self._impl.set_header_route(HeaderRoute(name))
            del self._routes[name]
        for name, route in wanted.items():
            if self._routes.get(name) != route:
                await self._impl.set_header_route(_header_route(route))
                self._routes[name] = route
        await self._apply_mirrors(config)

    async def _apply_mirrors(self, config: PlaneConfig) -> None:
        wanted = {m.name: m for m in config.mirror_routes}
        for name in [n for n in self._mirrors if n not in wanted]:
            await self._impl.set_mirror_route(MirrorRoute(name))
            del self._mirrors[name]
        for name, mirror in wanted.items():
            if self._mirrors.get(name) != mirror:
                await self._impl.set_mirror_route(_mirror_route(mirror))
                self._mirrors[name] = mirror

    async def labelled_snapshot(self) -> PlaneSeries:
        destinations = self._destinations or ()
        workloads = {
            e.pod_template_hash: Workload(e.workload, e.app, e.version)
            for d in reversed(destinations)  # the stable's facts win a shared hash
            for e in d.endpoints
        }
        return PlaneSeries(
            labels=self.labels,
            snapshot=await self._impl.metrics_snapshot(),
            workloads=workloads,
            stable_service=destinations[0].service if destinations else "",
            canary_service=destinations[1].service if len(destinations) > 1 else "",
        )


class RouterPlanes:
    """The `DataPlanes` factory the runtime is given: Headway's own routers."""

    def __init__(self, *, haproxy_binary: str | None = None) -> None:
        self._haproxy_binary = haproxy_binary
        self._planes: list[RouterPlane] = []
        self._metrics: MetricsServer | None = None

    def _haproxy(self) -> str:
        if self._haproxy_binary is not None:
            return self._haproxy_binary if Path(self._haproxy_binary).is_file() else ""
        found = shutil.which("haproxy")
        if found:
            return found
        return HAPROXY_FALLBACK if Path(HAPROXY_FALLBACK).is_file() else ""

    def unavailable(self, router: str) -> str:
        if router not in ROUTERS:
            return f"unknown router {router!r}: the runtime config's `router` is one of {ROUTERS}"
        if router == "haproxy" and not self._haproxy():
            return (
                "the runtime config says `router: haproxy`, but no haproxy executable was found "
                f"on PATH or at {HAPROXY_FALLBACK} (install Debian's haproxy, or use embedded)"
            )
        return ""

    def stop_leftovers(self, work_dir: Path) -> list[int]:
        return stop_leftover_routers(work_dir)

    def create(
        self, *, router: str, port: int, work_dir: Path, labels: Mapping[str, str]
    ) -> DataPlane:
        problem = self.unavailable(router)
        if problem:
            raise DataPlaneError(problem)
        return RouterPlane(
            router=router,
            port=port,
            work_dir=work_dir,
            labels=labels,
            haproxy=self._haproxy() or HAPROXY_FALLBACK,
            running=self._track,
        )

    def create_gateway(self, *, port: int, name: str) -> GatewayPlane:
        return GatewayListener(name=name, port=port)

    def _track(self, plane: RouterPlane, alive: bool) -> None:
        if alive and plane not in self._planes:
            self._planes.append(plane)
        elif not alive and plane in self._planes:
            self._planes.remove(plane)

    @property
    def planes(self) -> tuple[RouterPlane, ...]:
        return tuple(self._planes)

    async def _collect(self) -> list[PlaneSeries]:
        return [await plane.labelled_snapshot() for plane in list(self._planes)]

    async def _render(self) -> str:
        parts = await self._collect()
        foreign = [
            *mesh_metric_dialects.render_istio(parts),
            *mesh_metric_dialects.render_nginx(parts),
        ]
        return render_labelled(parts) + "\n".join(foreign) + "\n"

    async def start_metrics(self, port: int) -> tuple[str, int]:
        server = MetricsServer(self._render, host=LOOPBACK, port=port)
        await server.start()
        self._metrics = server
        return server.address

    async def close_metrics(self) -> None:
        if self._metrics is not None:
            await self._metrics.close()
            self._metrics = None


def haproxy_dir(work_dir: Path) -> Path:
    """Where an HAProxy keeps its sockets: `work_dir`, or a short stand-in under /tmp.

    HAProxy refuses unix socket paths longer than 97 bytes, so a deep state directory gets
    a directory named after a digest of it; `work_dir/haproxy.dir` points there."""
    resolved = work_dir.resolve()
    if len(str(resolved)) <= MAX_SOCKET_DIR_LENGTH:
        return work_dir
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    short = Path(tempfile.gettempdir()) / f"headway-haproxy-{digest}"
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / POINTER_FILE).write_text(f"{short}\n")
    return short


def _haproxy_dirs(work_dir: Path) -> list[Path]:
    if not work_dir.is_dir():
        return []
    dirs = [p.parent for p in work_dir.rglob("haproxy.pid")]
    for pointer in work_dir.rglob(POINTER_FILE):
        with contextlib.suppress(OSError):
            dirs.append(Path(pointer.read_text().strip()))
    return sorted(set(dirs))


def stop_leftover_routers(work_dir: Path, *, grace_seconds: float = 2.0) -> list[int]:
    """Stop HAProxy processes a killed runtime left running under `work_dir`; their pids.

    A runtime's own children die with it, but an HAProxy it started does not; each one's
    pidfile sits in its VirtualService's HAProxy dir, and its command line names its config
    file there, which tells a leftover from an unrelated process that reused the pid."""
    found = []
    for directory in _haproxy_dirs(work_dir):
        try:
            pid = int((directory / "haproxy.pid").read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if str(directory / "haproxy.cfg").encode() in cmdline.split(b"\0"):
            found.append(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline and any(process_alive(pid) for pid in found):
        time.sleep(0.02)
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)
    return found


def _conforms(
    planes: RouterPlanes, plane: RouterPlane, gateway: GatewayListener
) -> tuple[DataPlanes, DataPlane, GatewayPlane]:
    return planes, plane, gateway  # mypy proves all three satisfy the mesh's protocols
