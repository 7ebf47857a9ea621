"""The local mesh: every Istio VirtualService in the store becomes a real traffic router.

One data-plane router per VirtualService listens on 127.0.0.1 at a port kept in the
annotation `headway.dev/address: 127.0.0.1:PORT` (chosen once, so a restart keeps the address;
set it yourself to choose the port). `sync()` is one step: it reads every VirtualService, the
Services its routes name and their ready Pods, and brings each router to the plan
`mesh_plan` derives — endpoints, then weights, then header routes, without a restart of the
router (HAProxy restarts once when a new header name must be matched). It writes what it
realized to the VirtualService's status and records an Event when the split changes.

All routers' request metrics are served together on one runtime-wide `/metrics` endpoint
whose port is kept in `<work dir>/metrics-port`; the runtime records its address as
`metricsAddress` in `runtime.json`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.events import record_event
from headway.cluster.local.kubelet.network import LOOPBACK, free_port
from headway.cluster.local.mesh.gateways import (
    ADDRESS_ANNOTATION,
    FIELD_MANAGER,
    GatewayListeners,
    publish_address,
)
from headway.cluster.local.mesh.plan import MeshPlan, MeshPlanError, plan_virtual_service
from headway.cluster.local.mesh.plane import DataPlane, DataPlaneError, DataPlanes, plane_config
from headway.cluster.local.mesh.routed import ROUTED_KINDS, Routed, routed_objects
from headway.cluster.local.mesh.status import (
    error_status,
    keep_transition_times,
    realized_status,
    same_status,
    weights_summary,
)
from headway.cluster.local.mesh.world import MeshWorld
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = ["ADDRESS_ANNOTATION", "FIELD_MANAGER", "VIRTUAL_SERVICE_API", "Mesh"]

_log = logging.getLogger("headway.runtime")
VIRTUAL_SERVICE_API = "networking.istio.io/v1beta1"


@dataclass
class _Router:
    """A running data plane and what it was started as (a handle, not persisted state)."""

    plane: DataPlane
    router: str
    port: int


def _annotated_port(vs: Obj) -> int | None:
    raw = str((vs["metadata"].get("annotations") or {}).get(ADDRESS_ANNOTATION) or "")
    port = raw.rpartition(":")[2]
    return int(port) if port.isdigit() and 0 < int(port) < 65536 else None


def _router_dir(obj: Obj) -> str:
    """A VirtualService's router works in `<namespace>/<name>`, another object's in
    `<namespace>/<kind>-<name>` (an Ingress may share a VirtualService's name)."""
    name = str(obj["metadata"]["name"])
    return name if _is_istio_service(obj) else f"{obj['kind'].lower()}-{name}"


def _is_istio_service(obj: Obj) -> bool:
    """An Istio VirtualService (App Mesh has a kind of the same name)."""
    api_group = str(obj.get("apiVersion") or "").partition("/")[0]
    return obj.get("kind") == "VirtualService" and api_group == "networking.istio.io"


class Mesh:
    def __init__(
        self,
        cluster: Cluster,
        *,
        clock: Clock,
        planes: DataPlanes,
        work_dir: Path,
        router: Callable[[], str],
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self._planes = planes
        self._work_dir = work_dir
        self._router = router
        self._routers: dict[str, _Router] = {}  # by VirtualService uid
        self._announced: dict[str, str] = {}  # last Event message per uid, to record changes only
        self._metrics: tuple[str, int] | None = None
        self._gateways = GatewayListeners(cluster, planes=planes)

    @property
    def metrics_address(self) -> str:
        """`127.0.0.1:PORT` of the runtime-wide `/metrics` endpoint ("" before `start`)."""
        return "" if self._metrics is None else f"{self._metrics[0]}:{self._metrics[1]}"

    async def start(self) -> None:
        """Stop routers an earlier, killed runtime left behind; open the metrics endpoint on
        the port the last run used, else on a new one."""
        if self._metrics is not None:
            return
        self._work_dir.mkdir(parents=True, exist_ok=True)
        for pid in self._planes.stop_leftovers(self._work_dir):
            _log.warning("stopped router process %d left by an earlier runtime", pid)
        port_file = self._work_dir / "metrics-port"
        try:
            self._metrics = await self._planes.start_metrics(int(port_file.read_text()))
        except (OSError, ValueError):  # no port recorded yet, or it is taken now
            self._metrics = await self._planes.start_metrics(0)
        port_file.write_text(f"{self._metrics[1]}\n")

    async def close(self) -> None:
        for handle in self._routers.values():
            with contextlib.suppress(DataPlaneError, OSError):
                await handle.plane.close()
        self._routers.clear()
        await self._gateways.close()
        if self._metrics is not None:
            await self._planes.close_metrics()
            self._metrics = None

    async def sync(self) -> None:
        """One step: realize every VirtualService, close routers of deleted ones, then put
        each Gateway's listener in front of the routers bound to it."""
        await self.start()
        rollouts = self._cluster.list("argoproj.io/v1alpha1", "Rollout")
        world = MeshWorld.of(
            self._cluster.list("v1", "Service"),
            self._cluster.list("v1", "Pod"),
            rollouts,
            self._destination_rules(),
        )
        seen: set[str] = set()
        for routed in routed_objects(rollouts, self._routed_candidates()):
            seen.add(str(routed.obj["metadata"]["uid"]))
            await self._guarded(routed.obj, self._realize_routed(routed, world))
        virtual_services = self._cluster.list(VIRTUAL_SERVICE_API, "VirtualService")
        for vs in virtual_services:
            if vs["metadata"].get("deletionTimestamp"):
                continue
            seen.add(str(vs["metadata"]["uid"]))
            await self._guarded(vs, self._realize(vs, world))
        for uid in set(self._routers) - seen:
            self._announced.pop(uid, None)
            with contextlib.suppress(DataPlaneError, OSError):
                await self._routers.pop(uid).plane.close()
        addresses = {
            f"{vs['metadata'].get('namespace') or 'default'}/{vs['metadata']['name']}": (
                LOOPBACK, self._routers[str(vs["metadata"]["uid"])].port
            )
            for vs in virtual_services
            if str(vs["metadata"]["uid"]) in self._routers
        }
        await self._gateways.sync(virtual_services, addresses=addresses, now=self._clock.now())

    async def _guarded(self, obj: Obj, step: Coroutine[Any, Any, None]) -> None:
        """Run one object's realization; its failure is its own, not the step's."""
        name = f"{obj['kind'].lower()} {obj['metadata']['name']}"
        try:
            await step
        except NotFound:
            return  # deleted while we worked on it
        except ClusterError as err:  # e.g. the object changed under us: next step
            _log.warning("%s: %s", name, err)
        except Exception as err:  # one broken object must not stop the others
            message = f"{type(err).__name__}: {err}"
            _log.warning("%s: %s", name, message)
            with contextlib.suppress(ClusterError):
                self._fail(obj, "MeshError", message)

    def _destination_rules(self) -> list[Obj]:
        """Every DestinationRule, whichever networking.istio.io version stores it."""
        served = {
            k.api_version
            for k in self._cluster.discovery()
            if k.kind == "DestinationRule" and k.group == "networking.istio.io"
        }
        rules: dict[str, Obj] = {}
        for api_version in sorted(served):
            for rule in self._cluster.list(api_version, "DestinationRule"):
                rules.setdefault(str(rule["metadata"].get("uid")), rule)
        return list(rules.values())

    def _routed_candidates(self) -> dict[tuple[str, str, str], Obj]:
        """The objects of the kinds other routers use, by (kind, namespace, name)."""
        found: dict[tuple[str, str, str], Obj] = {}
        served = {(k.api_version, k.kind) for k in self._cluster.discovery()}
        for api_version, kind in ROUTED_KINDS:
            if (api_version, kind) not in served:
                continue
            for obj in self._cluster.list(api_version, kind):
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    key = (kind, str(meta.get("namespace") or "default"), str(meta["name"]))
                    found.setdefault(key, obj)
        return found

    async def _realize_routed(self, routed: Routed, world: MeshWorld) -> None:
        if routed.plan is None:
            self._fail(routed.obj, "InvalidSpec", routed.error)
            return
        await self._run(routed.obj, routed.plan, world)

    async def _realize(self, vs: Obj, world: MeshWorld) -> None:
        meta = vs["metadata"]
        namespace = str(meta.get("namespace") or "default")
        try:
            plan = plan_virtual_service(vs, roles=world.roles.get((namespace, meta["name"])))
        except MeshPlanError as err:
            self._fail(vs, "InvalidSpec", str(err))
            return
        await self._run(vs, plan, world)

    async def _run(self, vs: Obj, plan: MeshPlan, world: MeshWorld) -> None:
        """Bring the router of `vs` (a VirtualService or another routed object) to `plan`."""
        meta = vs["metadata"]
        namespace = str(meta.get("namespace") or "default")
        router = self._router()
        unavailable = self._planes.unavailable(router)
        if unavailable:
            self._fail(vs, "RouterUnavailable", unavailable)
            return
        missing = [ref.name for ref in plan.services() if not world.has_service(ref)]
        config = plane_config(plan, namespace=namespace, endpoints=world.endpoints)
        try:
            handle = await self._ensure_router(vs, router)
            await handle.plane.configure(config)
        except (DataPlaneError, OSError) as err:
            self._fail(vs, "RouterError", str(err))
            return
        address = f"{LOOPBACK}:{handle.port}"
        publish_address(self._cluster, vs, address)
        router = handle.plane.type_name  # embedded while HAProxy's plane mirrors
        status = realized_status(
            plan=plan,
            config=config,
            router=router,
            address=address,
            generation=int(meta.get("generation") or 1),
            now=self._clock.now(),
        )
        if missing:
            status["missingServices"] = missing
        self._write_status(vs, status)
        self._announce(vs, "TrafficSplit", f"{router} router at {address}: "
                       f"{weights_summary(plan, config)}", warning=False)

    async def _ensure_router(self, vs: Obj, router: str) -> _Router:
        """The running router for `vs`, (re)started when the router kind or port changed."""
        uid = str(vs["metadata"]["uid"])
        current = self._routers.get(uid)
        wanted = _annotated_port(vs) or (current.port if current else None)
        if current is not None and current.router == router and current.port == wanted:
            return current
        if current is not None:
            await self._routers.pop(uid).plane.close()
        port = wanted or free_port()
        try:
            plane = await self._start(vs, router, port)
        except OSError as err:  # the recorded port is taken: take another, say so
            port = free_port()
            plane = await self._start(vs, router, port)
            self._announce(vs, "AddressChanged", f"{LOOPBACK}:{wanted} unavailable ({err}); "
                           f"now {LOOPBACK}:{port}", warning=True)
        self._routers[uid] = _Router(plane, router, port)
        return self._routers[uid]

    async def _start(self, vs: Obj, router: str, port: int) -> DataPlane:
        meta = vs["metadata"]
        namespace = str(meta.get("namespace") or "default")
        plane = self._planes.create(
            router=router,
            port=port,
            work_dir=self._work_dir / namespace / _router_dir(vs),
            labels={"namespace": namespace, vs["kind"].lower(): meta["name"]},
        )
        await plane.start()
        return plane

    def _write_status(self, vs: Obj, status: Obj) -> None:
        if not _is_istio_service(vs):  # other routers' objects: Events only
            return
        old = vs.get("status") or {}
        if same_status(old, status):
            return
        meta = vs["metadata"]
        self._cluster.patch_status(
            vs["apiVersion"],
            "VirtualService",
            meta["name"],
            meta.get("namespace"),
            keep_transition_times(old, status),
        )

    def _fail(self, vs: Obj, reason: str, message: str) -> None:
        generation = int(vs["metadata"].get("generation") or 1)
        status = error_status(
            vs.get("status") or {},
            reason=reason,
            message=message,
            generation=generation,
            now=self._clock.now(),
        )
        self._write_status(vs, status)
        self._announce(vs, reason, message, warning=True)

    def _announce(self, vs: Obj, reason: str, message: str, *, warning: bool) -> None:
        """Record an Event when this VirtualService's news changed since the last one."""
        uid = str(vs["metadata"]["uid"])
        if self._announced.get(uid) == f"{reason}: {message}":
            return
        self._announced[uid] = f"{reason}: {message}"
        with contextlib.suppress(ClusterError):
            record_event(
                self._cluster,
                self._clock,
                involved=vs,
                reason=reason,
                message=message,
                event_type="Warning" if warning else "Normal",
                component="headway-mesh",
            )
