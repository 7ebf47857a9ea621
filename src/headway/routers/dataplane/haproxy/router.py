"""The HAProxy router: Debian's HAProxy as the data plane, driven by its runtime API.

HAProxy is started once with the layout in `haproxy_config`; after that, weights, endpoints
and header routes change only through the admin socket (`set weight`, `set server ... addr
... port ...`, `set server ... state ready|maint`, `prepare/add/commit map`), never a reload.

Metrics are read from `show stat` and turned into the same series the embedded router
records, with two approximations (see docs/traffic-routing.md): codes are status classes
("2xx", "5xx") because HAProxy counts classes, and each new request is put in the histogram
bucket of the server's average total time (`ttime`) at the moment of reading.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Sequence
from pathlib import Path

from headway.routers.dataplane.haproxy import config as haproxy_config
from headway.routers.dataplane.haproxy.config import MAP_CONVERTERS, HAProxyLayout, map_path
from headway.routers.dataplane.haproxy.runtime import (
    AdminSocket,
    HAProxyProcess,
    parse_server_stats,
)
from headway.routers.dataplane.metrics import (
    MetricsServer,
    MetricsSnapshot,
    RequestMetrics,
    render_prometheus,
)
from headway.routers.dataplane.protocol import (
    Destination,
    Endpoint,
    HeaderRoute,
    MirrorRoute,
    RouterError,
    TrafficRouter,
    WeightDestination,
    validate_weights,
)

__all__ = ["HAProxyRouter"]

BACKENDS = haproxy_config.ALL_BACKENDS
EXTRAS = haproxy_config.EXTRA_BACKENDS
NEW_MAP_VERSION = re.compile(r"New version created: (\d+)")


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class HAProxyRouter:
    """A `TrafficRouter` whose data plane is an HAProxy child process."""

    def __init__(
        self,
        *,
        work_dir: Path,
        binary: str = "/usr/sbin/haproxy",
        host: str = "127.0.0.1",
        port: int = 0,
        slots: int = 16,
        route_headers: Sequence[str] = ("x-canary",),
        metrics_host: str = "127.0.0.1",
        metrics_port: int = 0,
    ) -> None:
        self._layout = HAProxyLayout(
            work_dir=work_dir,
            host=host,
            port=port,
            slots=slots,
            route_headers=tuple(route_headers),
        )
        self._binary = binary
        self._process = HAProxyProcess(binary, self._layout)
        self._admin = AdminSocket(self._layout.admin_socket)
        self._metrics = RequestMetrics()
        self._metrics_server = MetricsServer(
            self._render_metrics, host=metrics_host, port=metrics_port
        )
        self._services = {b: b for b in BACKENDS}  # backend -> the Service it carries
        self._slots: dict[str, list[Endpoint | None]] = {b: [None] * slots for b in BACKENDS}
        self._last_counts: dict[tuple[str, str], dict[str, int]] = {}
        self._poll_lock = asyncio.Lock()
        self._routes: dict[str, HeaderRoute] = {}
        self._weights = {b: 100 if b == "stable" else 0 for b in BACKENDS}

    @property
    def type_name(self) -> str:
        return "haproxy"

    @property
    def address(self) -> tuple[str, int]:
        return self._layout.host, self._layout.port

    @property
    def metrics_address(self) -> tuple[str, int]:
        return self._metrics_server.address

    @property
    def pid(self) -> int | None:
        """HAProxy's process id while it runs."""
        return self._process.pid

    @property
    def pid_file(self) -> Path:
        return self._layout.pid_file

    async def start(self) -> None:
        if self._layout.port == 0:  # HAProxy cannot report a kernel-chosen port; pick one
            self._layout = HAProxyLayout(
                work_dir=self._layout.work_dir,
                host=self._layout.host,
                port=_free_port(self._layout.host),
                slots=self._layout.slots,
                route_headers=self._layout.route_headers,
            )
            self._process = HAProxyProcess(self._binary, self._layout)
        haproxy_config.write_files(self._layout)
        await self._process.start()
        await self._metrics_server.start()

    async def close(self) -> None:
        await self._metrics_server.close()
        await self._process.stop()

    async def update_destinations(
        self, *, stable: Destination, canary: Destination, additional: Sequence[Destination] = ()
    ) -> None:
        if len(additional) > len(EXTRAS):
            raise RouterError(
                f"the haproxy router carries at most {len(EXTRAS)} additional destinations"
            )
        given = {"stable": stable, "canary": canary, **dict(zip(EXTRAS, additional, strict=False))}
        async with self._poll_lock:
            await self._poll_locked()  # count what old slot owners served before reassigning
            planned = {b: list(self._slots[b]) for b in BACKENDS}
            commands: list[str] = []
            for backend in BACKENDS:
                ready = given[backend].ready_endpoints if backend in given else ()
                commands += self._assign_slots(backend, ready, planned[backend])
            if commands:
                await self._admin.run(*commands)
            self._slots = planned  # only once HAProxy accepted every command
            self._services = {b: given[b].service if b in given else b for b in BACKENDS}

    def _assign_slots(
        self, backend: str, ready: tuple[Endpoint, ...], slots: list[Endpoint | None]
    ) -> list[str]:
        """Runtime commands moving `backend`'s slots to exactly `ready`; updates `slots`."""
        if len(ready) > self._layout.slots:
            raise RouterError(
                f"{len(ready)} ready endpoints for {backend} but only {self._layout.slots} "
                "haproxy slots; start the router with more `slots`"
            )
        for endpoint in ready:
            _require_ip(endpoint)
        commands: list[str] = []
        for index, current in enumerate(slots):
            if current is not None and current not in ready:
                slots[index] = None
                commands.append(f"set server {backend}/s{index + 1} state maint")
        for endpoint in ready:
            if endpoint in slots:
                continue
            index = slots.index(None)
            slots[index] = endpoint
            server = f"{backend}/s{index + 1}"
            commands.append(f"set server {server} addr {endpoint.host} port {endpoint.port}")
            commands.append(f"set server {server} state ready")
        return commands

    def _split_weights(
        self, weight: int, additional: Sequence[WeightDestination]
    ) -> dict[str, int]:
        """The weight of each `split` server for `weight`% canary and `additional`."""
        stable_share = validate_weights(weight, additional)
        carried = {service: backend for backend, service in self._services.items()
                   if backend in EXTRAS}
        unknown = [d.service for d in additional if d.service not in carried]
        if unknown:
            raise RouterError(f"additional destinations {unknown} were never given endpoints")
        wanted = {b: 0 for b in BACKENDS}
        wanted.update({"stable": stable_share, "canary": weight})
        wanted.update({carried[d.service]: d.weight for d in additional})
        return wanted

    async def set_weight(self, weight: int, additional: Sequence[WeightDestination] = ()) -> None:
        wanted = self._split_weights(weight, additional)
        changed = [b for b in BACKENDS if wanted[b] != self._weights[b]]
        # Raise before lowering: between commands the servers must never all be at 0
        # (0 -> 100 would otherwise leave a moment with no server and answer 503).
        changed.sort(key=lambda b: wanted[b] <= self._weights[b])
        if changed:
            await self._admin.run(*(f"set weight split/{b} {wanted[b]}" for b in changed))
        self._weights = wanted

    async def verify_weight(
        self, weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        try:
            expected = self._split_weights(weight, additional)
        except RouterError:
            return False
        for server, share in expected.items():
            answer = await self._admin.run(f"get weight split/{server}")
            if int(answer.split()[0]) != share:
                return False
        return True

    async def set_header_route(self, route: HeaderRoute) -> None:
        unknown = haproxy_config.check_headers(self._layout, [m.header for m in route.matches])
        if unknown:
            raise RouterError(
                f"header route {route.name!r} matches on {unknown}, but this haproxy router "
                f"can only match {list(self._layout.route_headers)} (see `route_headers`)"
            )
        for match in route.matches:
            if not match.value or any(c.isspace() or c in ";#\\" for c in match.value):
                raise RouterError(
                    f"header route {route.name!r}: value {match.value!r} must be non-empty "
                    "without spaces, ';', '#' or backslashes for the haproxy router"
                )
        if route.matches:
            self._routes[route.name] = route
        else:
            self._routes.pop(route.name, None)
        await self._publish_routes()

    async def set_mirror_route(self, route: MirrorRoute) -> None:
        """HAProxy 2.6 has no request mirroring of its own (only through an SPOE agent, which
        Debian does not ship); the local mesh runs the embedded router while a VirtualService
        mirrors."""
        if route.matches:
            raise RouterError(
                f"mirror route {route.name!r}: the haproxy router cannot mirror requests "
                "(use the embedded router)"
            )

    async def remove_managed_routes(self) -> None:
        self._routes.clear()
        await self._publish_routes()

    async def _publish_routes(self) -> None:
        """Replace every route map atomically (prepare a new version, fill, commit)."""
        for header in self._layout.route_headers:
            for kind in MAP_CONVERTERS:
                entries = [
                    (m.value, route.name)
                    for route in self._routes.values()
                    for m in route.matches
                    if m.header.lower() == header.lower() and m.kind is kind
                ]
                await self._replace_map(map_path(self._layout, header, kind), entries)

    async def _replace_map(self, path: Path, entries: list[tuple[str, str]]) -> None:
        answer = await self._admin.run(f"prepare map {path}")
        found = NEW_MAP_VERSION.search(answer)
        if found is None:
            raise RouterError(f"haproxy did not prepare a new version of {path}: {answer!r}")
        version = found.group(1)
        adds = [f"add map @{version} {path} {key} {name}" for key, name in entries]
        await self._admin.run(*adds, f"commit map @{version} {path}")

    async def _render_metrics(self) -> str:
        return render_prometheus(await self.metrics_snapshot())

    async def metrics_snapshot(self) -> MetricsSnapshot:
        async with self._poll_lock:
            await self._poll_locked()
        return self._metrics.snapshot()

    async def _poll_locked(self) -> None:
        """Add what each slot served since the last poll to the hash that owns the slot."""
        stats = parse_server_stats(await self._admin.run("show stat -1 6 -1", check=False))
        for backend in BACKENDS:
            if self._services[backend] == backend and backend in EXTRAS:
                continue  # an extra backend no destination was given: nothing to count
            rows = [s for s in stats if s.backend == backend]
            served_by_slots: dict[str, int] = {}
            for row in sorted(rows, key=lambda r: r.server == "BACKEND"):
                delta = self._delta(backend, row.server, row.responses)
                if row.server == "BACKEND":  # answers no server gave, e.g. 503 with no slot
                    delta = {c: n - served_by_slots.get(c, 0) for c, n in delta.items()}
                    owner = ""
                else:
                    for code, count in delta.items():
                        served_by_slots[code] = served_by_slots.get(code, 0) + count
                    owner = self._slot_owner(backend, row.server)
                for code, count in delta.items():
                    self._metrics.add(
                        service=self._services[backend],
                        pod_template_hash=owner,
                        route="",
                        code=code,
                        count=count,
                        seconds_each=row.average_total_ms / 1000,
                    )

    def _delta(self, backend: str, server: str, counts: dict[str, int]) -> dict[str, int]:
        previous = self._last_counts.get((backend, server), {})
        self._last_counts[backend, server] = counts
        return {code: max(0, n - previous.get(code, 0)) for code, n in counts.items()}

    def _slot_owner(self, backend: str, server: str) -> str:
        index = int(server.removeprefix("s")) - 1
        slots = self._slots[backend]
        owner = slots[index] if 0 <= index < len(slots) else None
        return "" if owner is None else owner.pod_template_hash


def _require_ip(endpoint: Endpoint) -> None:
    try:
        ipaddress.ip_address(endpoint.host)
    except ValueError as error:
        raise RouterError(
            f"endpoint {endpoint.host}:{endpoint.port}: the haproxy router needs an IP address"
        ) from error


def _conforms_to_protocol(router: HAProxyRouter) -> TrafficRouter:
    return router  # mypy proves HAProxyRouter is a TrafficRouter
