"""Istio Gateways on the local mesh: one listener per Gateway in front of the VirtualService
routers bound to it (`gateway_plan` decides the routes; a `GatewayPlane` moves the bytes).

Like a VirtualService's router, a Gateway's listener keeps its port in the annotation
`headway.dev/address: 127.0.0.1:PORT` (chosen once; set it yourself to choose the port), and
what it realized goes to the Gateway's status: the routes by host, what is not realized and
which bound VirtualServices have no router yet.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.local.kubelet.network import LOOPBACK, free_port
from headway.cluster.local.mesh.gateway_plan import GatewayPlan, plan_gateway
from headway.cluster.local.mesh.plane import DataPlaneError, DataPlanes, GatewayPlane
from headway.cluster.local.mesh.status import keep_transition_times, same_status
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = [
    "ADDRESS_ANNOTATION",
    "FIELD_MANAGER",
    "GATEWAY_API",
    "GatewayListeners",
    "gateway_status",
    "publish_address",
]

_log = logging.getLogger("headway.runtime")
GATEWAY_API = "networking.istio.io/v1beta1"
ADDRESS_ANNOTATION = "headway.dev/address"
FIELD_MANAGER = "headway-mesh"


@dataclass
class _Listener:
    plane: GatewayPlane
    port: int


def _key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _annotated_port(obj: Obj) -> int | None:
    raw = str((obj["metadata"].get("annotations") or {}).get(ADDRESS_ANNOTATION) or "")
    port = raw.rpartition(":")[2]
    return int(port) if port.isdigit() and 0 < int(port) < 65536 else None


def gateway_status(
    plan: GatewayPlan, *, address: str, generation: int, now: datetime
) -> dict[str, Any]:
    """The Gateway's status for `plan` served at `address`. Purely computational."""
    status: dict[str, Any] = {
        "address": address,
        "observedGeneration": generation,
        "routes": [
            {"host": r.pattern, "virtualService": r.virtual_service,
             "address": f"{r.host}:{r.port}"}
            for r in plan.routes
        ],
    }
    if plan.unsupported:
        status["unsupported"] = list(plan.unsupported)
    if plan.waiting:
        status["waiting"] = list(plan.waiting)
    hosts = ", ".join(sorted({r.pattern for r in plan.routes})) or "no host yet"
    reason = "PartiallyRealized" if plan.unsupported else "Realized"
    if not plan.routes:
        reason = "NoRoutes"
    status["conditions"] = [{
        "type": "Ready",
        "status": "True",
        "reason": reason,
        "message": f"listening at {address} for {hosts}",
        "lastTransitionTime": format_time(now),
    }]
    return status


class GatewayListeners:
    """Brings the running listeners to the Gateways in the store; one `sync` per mesh step."""

    def __init__(self, cluster: Cluster, *, planes: DataPlanes) -> None:
        self._cluster = cluster
        self._planes = planes
        self._listeners: dict[str, _Listener] = {}  # by Gateway uid

    async def close(self) -> None:
        for listener in self._listeners.values():
            with contextlib.suppress(DataPlaneError, OSError):
                await listener.plane.close()
        self._listeners.clear()

    async def sync(
        self,
        virtual_services: list[Obj],
        *,
        addresses: Mapping[str, tuple[str, int]],
        now: datetime,
    ) -> None:
        """Realize every Gateway; `addresses` are the running VirtualService routers."""
        seen: set[str] = set()
        for gateway in self._cluster.list(GATEWAY_API, "Gateway"):
            if gateway["metadata"].get("deletionTimestamp"):
                continue
            seen.add(str(gateway["metadata"]["uid"]))
            plan = plan_gateway(gateway, virtual_services, addresses=addresses)
            try:
                await self._realize(gateway, plan, now)
            except NotFound:
                continue
            except (ClusterError, DataPlaneError, OSError) as err:
                _log.warning("gateway %s: %s", _key(gateway), err)
        for uid in set(self._listeners) - seen:
            with contextlib.suppress(DataPlaneError, OSError):
                await self._listeners.pop(uid).plane.close()

    async def _realize(self, gateway: Obj, plan: GatewayPlan, now: datetime) -> None:
        listener = await self._ensure(gateway)
        await listener.plane.configure(plan.routes)
        address = f"{LOOPBACK}:{listener.port}"
        publish_address(self._cluster, gateway, address)
        generation = int(gateway["metadata"].get("generation") or 1)
        status = gateway_status(plan, address=address, generation=generation, now=now)
        old = gateway.get("status") or {}
        if not same_status(old, status):
            meta = gateway["metadata"]
            self._cluster.patch_status(
                gateway["apiVersion"], "Gateway", meta["name"], meta.get("namespace"),
                keep_transition_times(old, status),
            )

    async def _ensure(self, gateway: Obj) -> _Listener:
        uid = str(gateway["metadata"]["uid"])
        current = self._listeners.get(uid)
        wanted = _annotated_port(gateway) or (current.port if current else None)
        if current is not None and current.port == wanted:
            return current
        if current is not None:
            await self._listeners.pop(uid).plane.close()
        port = wanted or free_port()
        plane = self._planes.create_gateway(port=port, name=_key(gateway))
        try:
            await plane.start()
        except OSError:  # the recorded port is taken: take another (the annotation follows)
            port = free_port()
            plane = self._planes.create_gateway(port=port, name=_key(gateway))
            await plane.start()
        self._listeners[uid] = _Listener(plane, port)
        return self._listeners[uid]


def publish_address(cluster: Cluster, obj: Obj, address: str) -> None:
    """Annotate a Gateway or VirtualService with the address its listener serves on
    (`headway.dev/address`), unless it already says so."""
    meta = obj["metadata"]
    if (meta.get("annotations") or {}).get(ADDRESS_ANNOTATION) == address:
        return
    body: Obj = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace") or "default",
            "annotations": {ADDRESS_ANNOTATION: address},
        },
    }
    cluster.apply(body, field_manager=FIELD_MANAGER, force=True)
