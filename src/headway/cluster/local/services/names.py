"""Service names for Pods without DNS or root: an HTTP proxy per namespace.

Every container gets `HTTP_PROXY`/`http_proxy` and `HTTPS_PROXY`/`https_proxy` pointing at
its namespace's proxy on 127.0.0.1 (and `NO_PROXY`/`no_proxy` for loopback), unless it sets
them itself. A client that honours them (curl, Python's urllib and requests, Go's
net/http, Node's fetch with a proxy agent, ...) reaches a Service by the names it has in a
cluster, with the Service's own port:

    http://ledger-db:5432/...                          (the Pod's namespace)
    http://ledger-db.payments:5432/...                 (another namespace)
    http://ledger-db.payments.svc[.cluster.local]:5432/...
    http://ledger-0.ledger:8080/...                    (one Pod of a StatefulSet whose
                                                        serviceName is `ledger`)

A request in absolute form (`GET http://ledger-db:5432/x`) is sent on to the Service's
local port as `GET /x` with `Connection: close` (one request per connection); `CONNECT
ledger-db:5432` opens a tunnel to it (HTTPS, or any TCP a client tunnels through a
proxy). A name that is not a Service is passed through to the network, so outside
addresses still work; a cluster name with no such Service or port gets `502` saying which.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.local.kubelet.pod_ports import local_port
from headway.cluster.local.services.streams import answer, pipe
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_ready

__all__ = ["ServiceNameProxies", "Target", "proxy_env", "resolve"]

LOOPBACK = "127.0.0.1"
_CLUSTER_SUFFIXES = (".svc.cluster.local", ".svc")

Lookup = Callable[[str, str, str], Mapping[str, Any] | None]  # (kind, namespace, name)


@dataclass(frozen=True)
class Target:
    """Where a request goes: `host:port`, or `error` (a 502's text) for a cluster name that
    names no Service port."""

    host: str
    port: int
    error: str = ""


@dataclass(frozen=True)
class _Candidate:
    """One reading of a name: a Service, or (with `pod`) one Pod of a Service."""

    service: str
    namespace: str
    pod: str = ""


def _candidates(host: str, namespace: str) -> tuple[list[_Candidate], bool]:
    """The readings of `host`, most specific first, and whether it can only be a cluster
    name (then a miss is an error, not a name for the network)."""
    name = host.lower().rstrip(".")
    for suffix in _CLUSTER_SUFFIXES:
        if name.endswith(suffix):
            labels = name[: -len(suffix)].split(".")
            if len(labels) == 2:
                return [_Candidate(labels[0], labels[1])], True
            if len(labels) == 3:
                return [_Candidate(labels[1], labels[2], pod=labels[0])], True
            return [], True
    labels = name.split(".")
    if len(labels) == 1:
        return [_Candidate(labels[0], namespace)], labels[0] != "localhost"
    if len(labels) == 2:  # <svc>.<ns>, or <pod>.<svc> in the Pod's own namespace
        return [_Candidate(labels[0], labels[1]),
                _Candidate(labels[1], namespace, pod=labels[0])], False
    if len(labels) == 3:
        return [_Candidate(labels[1], labels[2], pod=labels[0])], False
    return [], False


def _local_port(service: Mapping[str, Any], port: int) -> int | None:
    entries = (service.get("spec") or {}).get("ports") or []
    ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    local = (ingress[0].get("ports") or []) if ingress else []
    for index, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("port") == port and index < len(local):
            return int(local[index]["port"])
    return None


def _pod_target(
    candidate: _Candidate, port: int, service: Mapping[str, Any], lookup: Lookup
) -> Target | None:
    """A Pod named by `<pod>.<service>`: it must exist with `subdomain` the Service (as a
    StatefulSet's Pods have) and be ready, unless the Service sets
    `publishNotReadyAddresses` (as for its DNS record); the port is its declared
    `containerPort`'s local port."""
    pod = lookup("Pod", candidate.namespace, candidate.pod)
    if pod is None or (pod.get("spec") or {}).get("subdomain") != candidate.service:
        return None
    if not (is_ready(pod) or (service.get("spec") or {}).get("publishNotReadyAddresses")):
        return None
    local = local_port(pod, port)
    if local is None:
        return Target(LOOPBACK, port, f'Pod "{candidate.namespace}/{candidate.pod}" has no '
                                      "port yet")
    return Target(LOOPBACK, local)


def resolve(host: str, port: int, *, namespace: str, lookup: Lookup) -> Target:
    """Where `host:port` asked for from a Pod in `namespace` goes. Purely computational."""
    candidates, certain = _candidates(host, namespace)
    for candidate in candidates:
        service = lookup("Service", candidate.namespace, candidate.service)
        if service is None:
            continue
        if candidate.pod:
            found = _pod_target(candidate, port, service, lookup)
            if found is not None:
                return found
            continue
        local = _local_port(service, port)
        if local is None:
            return Target(host, port, f'Service "{candidate.namespace}/{candidate.service}" '
                                      f"has no port {port} with a local address")
        return Target(LOOPBACK, local)
    if certain:
        return Target(host, port, f'no Service or Pod named "{host}"')
    return Target(host, port)


def proxy_env(address: str) -> dict[str, str]:
    """The variables that send a container's HTTP(S) clients through `address`."""
    url = f"http://{address}"
    bypass = "localhost,127.0.0.1,::1"
    return {"HTTP_PROXY": url, "http_proxy": url, "HTTPS_PROXY": url, "https_proxy": url,
            "NO_PROXY": bypass, "no_proxy": bypass}


class ServiceNameProxies:
    """One proxy per namespace, opened the first time a container there starts."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._servers: dict[str, asyncio.Server] = {}
        self._addresses: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def env_for(self, namespace: str) -> dict[str, str]:
        """The proxy variables for a container starting in `namespace` (the event loop must
        be running: the listener is bound now and served from it)."""
        if namespace not in self._addresses:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((LOOPBACK, 0))
            sock.listen(128)
            sock.setblocking(False)
            self._addresses[namespace] = f"{LOOPBACK}:{sock.getsockname()[1]}"
            task = asyncio.ensure_future(self._serve(namespace, sock))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return proxy_env(self._addresses[namespace])

    async def _serve(self, namespace: str, sock: socket.socket) -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await _handle(reader, writer, namespace=namespace, lookup=self._lookup)

        self._servers[namespace] = await asyncio.start_server(handle, sock=sock)

    def _lookup(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return self._cluster.get("v1", kind, name, namespace)
        except ClusterError:
            return None

    async def close(self) -> None:
        for server in self._servers.values():
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), timeout=2)
        self._servers.clear()
        self._addresses.clear()


async def _handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, namespace: str,
    lookup: Lookup,
) -> None:
    upstream: asyncio.StreamWriter | None = None
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
        request = _parse(head)
        if request is None:
            await answer(writer, 400, "not an HTTP proxy request")
            return
        method, host, port, rest = request
        target = resolve(host, port, namespace=namespace, lookup=lookup)
        if target.error:
            await answer(writer, 502, target.error)
            return
        up_reader, up_writer = await asyncio.wait_for(
            asyncio.open_connection(target.host, target.port), 10)
        upstream = up_writer
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
            return
        up_writer.write(rest)
        sending = asyncio.ensure_future(pipe(reader, up_writer))  # a request body
        await pipe(up_reader, writer)  # the response, until the Service closes
        sending.cancel()
    except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        with contextlib.suppress(OSError):
            await answer(writer, 502, "could not reach the destination")
    finally:
        writer.close()
        if upstream is not None:
            upstream.close()


def _parse(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, the request to send on) of a proxy request's head."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (method, host.strip("[]"), int(port), b"") if port.isdigit() else None
    if not target.lower().startswith("http://"):
        return None
    authority, slash, path = target[len("http://"):].partition("/")
    host, colon, port = authority.rpartition(":")
    if not colon or not port.isdigit():
        host, port = authority, "80"
    headers = [h for h in lines[1:] if h and not h.lower().startswith(
        ("proxy-connection:", "proxy-authorization:", "connection:", "keep-alive:"))]
    sent = [f"{method} {slash}{path} {version}", *headers, "Connection: close", "", ""]
    return method, host, int(port), "\r\n".join(sent).encode("latin-1")
