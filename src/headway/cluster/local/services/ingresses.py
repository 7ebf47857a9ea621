"""Ingresses on the local runtime: one HTTP listener per Ingress on 127.0.0.1, routing each
request by its Host header and path (`ingress_plan`) to a Service's local port.

The listener's port is the Ingress's annotation `headway.dev/port` when set (to choose it),
else one picked once and kept for the runtime's life; it is published as the Ingress's
`status.loadBalancer.ingress: [{ip: 127.0.0.1, ports: [{port, protocol: TCP}]}]` (what
`kubectl get ingress` shows as ADDRESS and Argo CD's health reads). A request is sent on
with `Connection: close`, one per connection; no backend is a 404, a backend Service that
does not exist or has no such port a 503, both saying which. TLS (`spec.tls`) and
`ingressClassName` are not looked at: every Ingress is served, over plain HTTP, except a
canary Ingress (`<prefix>/canary: "true"`), which NGINX merges into its stable Ingress.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.local.kubelet.network import LOOPBACK, free_port
from headway.cluster.local.services.ingress_plan import Backend, choose_backend, ingress_routes
from headway.cluster.local.services.streams import answer, pipe
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = ["PORT_ANNOTATION", "IngressListeners", "service_local_port"]

_log = logging.getLogger("headway.runtime")
PORT_ANNOTATION = "headway.dev/port"


def service_local_port(service: Mapping[str, Any], port: int | str) -> int | None:
    """The runtime's local port for the Service port of that number or name."""
    entries = (service.get("spec") or {}).get("ports") or []
    published = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    local = (published[0].get("ports") or []) if published else []
    for index, entry in enumerate(entries):
        if isinstance(entry, Mapping) and port in (entry.get("port"), entry.get("name")):
            return int(local[index]["port"]) if index < len(local) else None
    return None


@dataclass
class _Listener:
    server: asyncio.Server
    port: int
    ingress: Obj


class IngressListeners:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._listeners: dict[str, _Listener] = {}

    async def sync(self) -> None:
        """Open a listener for each new Ingress, follow edits, close the deleted ones."""
        seen: set[str] = set()
        for ingress in self._cluster.list("networking.k8s.io/v1", "Ingress"):
            meta = ingress["metadata"]
            if _is_canary(ingress):
                continue  # NGINX merges it into its stable Ingress: the local mesh splits it
            key = f"{meta.get('namespace')}/{meta['name']}"
            seen.add(key)
            try:
                await self._realize(key, ingress)
            except (OSError, ValueError) as err:
                _log.warning("ingress %s: %s", key, err)
        for key in set(self._listeners) - seen:
            await self._close(key)

    async def _realize(self, key: str, ingress: Obj) -> None:
        wanted = _asked_port(ingress)
        listener = self._listeners.get(key)
        if listener is not None and wanted not in (None, listener.port):
            await self._close(key)
            listener = None
        if listener is None:
            port = wanted or free_port()
            server = await asyncio.start_server(
                lambda r, w: self._handle(key, r, w), LOOPBACK, port)
            listener = _Listener(server, port, ingress)
            self._listeners[key] = listener
        listener.ingress = ingress
        self._publish(ingress, listener.port)

    def _publish(self, ingress: Obj, port: int) -> None:
        status = {"loadBalancer": {"ingress": [
            {"ip": LOOPBACK, "ports": [{"port": port, "protocol": "TCP"}]}]}}
        if (ingress.get("status") or {}) != status:
            meta = ingress["metadata"]
            with contextlib.suppress(ClusterError):
                self._cluster.patch_status("networking.k8s.io/v1", "Ingress", meta["name"],
                                           meta.get("namespace"), status)

    async def _close(self, key: str) -> None:
        listener = self._listeners.pop(key)
        listener.server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(listener.server.wait_closed(), timeout=2)

    async def close(self) -> None:
        for key in list(self._listeners):
            await self._close(key)

    async def _handle(self, key: str, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
            path, host, forwarded = _request(head)
            listener = self._listeners.get(key)
            if listener is None:
                return
            routes, default = ingress_routes(listener.ingress)
            backend = choose_backend(routes, default, host=host, path=path)
            port = self._backend_port(listener.ingress, backend)
            if isinstance(port, tuple):
                await answer(writer, *port)
                return
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(LOOPBACK, port), 10)
            upstream = up_writer
            up_writer.write(forwarded)
            sending = asyncio.ensure_future(pipe(reader, up_writer))
            await pipe(up_reader, writer)
            sending.cancel()
        except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError):
            with contextlib.suppress(OSError):
                await answer(writer, 502, "could not reach the backend")
        finally:
            writer.close()
            if upstream is not None:
                upstream.close()

    def _backend_port(self, ingress: Obj, backend: Backend | None) -> int | tuple[int, str]:
        name = ingress["metadata"]["name"]
        if backend is None:
            return 404, f"Ingress {name}: no rule matches this host and path"
        try:
            service = self._cluster.get("v1", "Service", backend.service,
                                        ingress["metadata"].get("namespace"))
        except ClusterError:
            return 503, f"Ingress {name}: Service {backend.service} not found"
        port = service_local_port(service, backend.port)
        if port is None:
            return 503, f"Ingress {name}: Service {backend.service} has no port {backend.port}"
        return port


def _is_canary(ingress: Obj) -> bool:
    annotations = ingress["metadata"].get("annotations") or {}
    return any(k.endswith("/canary") and str(v) == "true" for k, v in annotations.items())


def _asked_port(ingress: Obj) -> int | None:
    raw = str((ingress["metadata"].get("annotations") or {}).get(PORT_ANNOTATION) or "")
    return int(raw) if raw.isdigit() else None


def _request(head: bytes) -> tuple[str, str, bytes]:
    """(path, Host, the head to send on with `Connection: close`); ValueError if not HTTP."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[1].startswith("/"):
        raise ValueError("not an HTTP request in origin form")
    host = next((h.split(":", 1)[1].strip() for h in lines[1:]
                 if h.lower().startswith("host:")), "")
    kept = [h for h in lines[1:] if h and not h.lower().startswith(("connection:", "keep-alive:"))]
    sent = [lines[0], *kept, "Connection: close", "", ""]
    return parts[1], host, "\r\n".join(sent).encode("latin-1")
