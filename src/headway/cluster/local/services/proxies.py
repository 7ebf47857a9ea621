"""Services: a real listening port on 127.0.0.1 in front of the ready Pods a Service selects.

Each `spec.ports[]` entry gets a local port: `nodePort` when the Service sets one, else a
free port chosen once and kept in `status.loadBalancer.ingress[0].ports[]` (so a runtime
restart listens on the same address). Endpoints follow readiness on every sync: a Pod is an
endpoint while its `Ready` condition is True and it is not being deleted. Each connection
goes to the next endpoint in round-robin order; if that one refuses the connection the
proxy tries the others before giving up. An `Endpoints` object mirrors the set.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.local.kubelet.network import LOOPBACK, free_port
from headway.cluster.local.kubelet.pod_ports import local_port
from headway.cluster.local.workloads.replicasets import owner_reference
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj

__all__ = ["Backend", "ServiceProxies", "TcpProxy", "service_ports"]

_log = logging.getLogger("headway.runtime")
FIELD_MANAGER = "headway-endpoints-controller"
PORT_ANNOTATION = "headway.dev/port"


@dataclass(frozen=True)
class Backend:
    host: str
    port: int
    pod: str


class TcpProxy:
    """An asyncio TCP proxy with round-robin over a backend list that can change any time."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._backends: tuple[Backend, ...] = ()
        self._counter = itertools.count()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def backends(self) -> tuple[Backend, ...]:
        return self._backends

    def set_backends(self, backends: tuple[Backend, ...]) -> None:
        self._backends = backends

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, LOOPBACK, self.port, reuse_address=True
        )

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), timeout=2)
        for task in list(self._tasks):
            task.cancel()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        backends = self._backends
        if not backends:
            return None
        first = next(self._counter)
        for offset in range(len(backends)):
            backend = backends[(first + offset) % len(backends)]
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(backend.host, backend.port), 2
                )
            except (OSError, TimeoutError):
                continue
        return None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        up_writer: asyncio.StreamWriter | None = None
        try:
            upstream = await self._connect()
            if upstream is None:
                return  # no ready endpoint: the client sees the connection close
            up_reader, up_writer = upstream
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass  # the proxy is closing: end this connection quietly
        finally:
            writer.close()
            if up_writer is not None:
                up_writer.close()
            if task is not None:
                self._tasks.discard(task)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if sink.can_write_eof():
                sink.write_eof()


def service_ports(service: Mapping[str, Any]) -> list[int]:
    """The local ports recorded in the Service's status, in `spec.ports` order."""
    ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if not ingress:
        return []
    return [int(p["port"]) for p in ingress[0].get("ports") or []]


def _selected(service: Obj, pods: list[Obj]) -> list[Obj]:
    selector = (service.get("spec") or {}).get("selector") or {}
    if not selector:
        return []
    return [
        p
        for p in pods
        if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
    ]


ErrorSink = Callable[[Obj, str], None]  # (the Service, what is wrong with it)


class ServiceProxies:
    """Keeps one proxy per Service port in step with the store; `sync()` is one step."""

    def __init__(self, cluster: Cluster, *, on_error: ErrorSink | None = None) -> None:
        self._cluster = cluster
        self._proxies: dict[tuple[str, int], TcpProxy] = {}  # (service uid, port index)
        self._on_error = on_error

    async def sync(self) -> None:
        services = self._cluster.list("v1", "Service")
        pods = self._cluster.list("v1", "Pod")
        wanted: set[tuple[str, int]] = set()
        for service in services:
            if service["metadata"].get("deletionTimestamp"):
                continue
            try:
                await self._sync_service(service, pods, wanted)
            except (OSError, ClusterError, TypeError, ValueError, AttributeError) as err:
                # One malformed Service (`ports: 5`) must not stop the runtime for the others.
                meta = service["metadata"]
                _log.warning("service %s/%s: %s", meta.get("namespace"), meta["name"], err)
                if self._on_error is not None:
                    self._on_error(service, f"{type(err).__name__}: {err}")
        for key in set(self._proxies) - wanted:
            await self._proxies.pop(key).close()

    async def _sync_service(
        self, service: Obj, pods: list[Obj], wanted: set[tuple[str, int]]
    ) -> None:
        ports = await self._ensure_ports(service)
        namespace = service["metadata"].get("namespace") or "default"
        ready = [
            p
            for p in _selected(
                service,
                [q for q in pods if (q["metadata"].get("namespace") or "default") == namespace],
            )
            if is_ready(p)
        ]
        spec_ports = (service.get("spec") or {}).get("ports") or []
        for index, _port in enumerate(ports):
            target = _target_port(spec_ports[index])
            backends = tuple(b for b in (_backend(p, target) for p in ready) if b is not None)
            key = (str(service["metadata"]["uid"]), index)
            wanted.add(key)
            self._proxies[key].set_backends(backends)
        self._write_endpoints(service, ready)

    async def _ensure_ports(self, service: Obj) -> list[int]:
        uid = str(service["metadata"]["uid"])
        spec_ports = (service.get("spec") or {}).get("ports") or []
        recorded = service_ports(service)
        ports = [
            int(p.get("nodePort") or (recorded[i] if i < len(recorded) else free_port()))
            for i, p in enumerate(spec_ports)
        ]
        for index, port in enumerate(ports):
            proxy = self._proxies.get((uid, index))
            if proxy is not None and proxy.port != port:
                await self._proxies.pop((uid, index)).close()
                proxy = None
            if proxy is None:
                proxy = TcpProxy(port)
                await proxy.start()
                self._proxies[(uid, index)] = proxy
        if ports != recorded:
            status = dict(service.get("status") or {})
            status["loadBalancer"] = {
                "ingress": [
                    {"ip": LOOPBACK, "ports": [{"port": p, "protocol": "TCP"} for p in ports]}
                ]
            }
            self._cluster.patch_status(
                "v1",
                "Service",
                service["metadata"]["name"],
                service["metadata"].get("namespace"),
                status,
            )
        return ports

    def _write_endpoints(self, service: Obj, ready: list[Obj]) -> None:
        meta = service["metadata"]
        subsets = []
        for pod in sorted(ready, key=lambda p: str(p["metadata"]["name"])):
            backend = _backend(pod)
            if backend is None:
                continue
            subsets.append(
                {
                    "addresses": [
                        {
                            "ip": LOOPBACK,
                            "targetRef": {
                                "kind": "Pod",
                                "name": pod["metadata"]["name"],
                                "namespace": pod["metadata"].get("namespace") or "default",
                                "uid": pod["metadata"]["uid"],
                            },
                        }
                    ],
                    "ports": [{"port": backend.port, "protocol": "TCP"}],
                }
            )
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": meta["name"],
                "namespace": meta.get("namespace") or "default",
                "ownerReferences": [owner_reference(service)],
            },
        }
        if meta.get("labels"):
            body["metadata"]["labels"] = dict(meta["labels"])
        if subsets:
            body["subsets"] = subsets
        self._cluster.apply(body, field_manager=FIELD_MANAGER, force=True)

    async def close(self) -> None:
        for proxy in self._proxies.values():
            await proxy.close()
        self._proxies.clear()


def _target_port(entry: object) -> object:
    """A Service port's `targetPort` (a number or a name), defaulting to its `port`."""
    if not isinstance(entry, dict):
        return None
    return entry.get("targetPort", entry.get("port"))


def _backend(pod: Obj, target: object = None) -> Backend | None:
    """The Pod at the local port its `target` port means (`pod_ports`: a declared port of
    its own, else the Pod's port); None while the Pod has no port yet."""
    port = local_port(pod, target)
    if port is None:
        return None
    return Backend(LOOPBACK, port, str(pod["metadata"]["name"]))
