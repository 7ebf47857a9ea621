"""The HAProxy configuration the HAProxy router starts with; everything after is runtime API.

Layout (all names fixed, so runtime commands can address them):

    frontend fe            bind host:port; header-route ACLs -> backend canary; else split
    backend  split         servers `stable`, `canary` and `extra1..4`, weighted 100-w-x / w / x
    frontend stable_in     bound on a unix socket; the `split/stable` server points at it
    frontend canary_in     the same for canary (and extra1..4)
    backend  stable        N server slots `s1..sN`, disabled until an endpoint is assigned
    backend  canary        the same (and extra1..4)

`extra1..4` carry additional destinations (a weighted experiment's templates) at weight 0
until one is assigned.

The split happens in its own backend because HAProxy's weighted round-robin between two
servers is exact (90/10 gives 900/100 requests over 1,000), while the endpoints of each
destination then share that destination's traffic evenly, whatever their number. Header
routes are ACLs on map lookups (exact `map_str`, prefix `map_beg`, regex `map_reg`), one map
file per header and match kind, so routes change through `add map` without a reload.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from headway.routers.dataplane.protocol import MatchKind, RouterError

__all__ = [
    "ALL_BACKENDS",
    "EXTRA_BACKENDS",
    "HAProxyLayout",
    "check_headers",
    "map_path",
    "render_config",
    "write_files",
]

BACKENDS = ("stable", "canary")
EXTRA_BACKENDS = ("extra1", "extra2", "extra3", "extra4")  # additional destinations
ALL_BACKENDS = (*BACKENDS, *EXTRA_BACKENDS)
MAP_CONVERTERS = {
    MatchKind.EXACT: "map_str",
    MatchKind.PREFIX: "map_beg",
    MatchKind.REGEX: "map_reg",
}


@dataclass(frozen=True)
class HAProxyLayout:
    """Where HAProxy listens and keeps its files, and how many endpoint slots it has."""

    work_dir: Path
    host: str
    port: int
    slots: int
    route_headers: tuple[str, ...]
    connect_timeout_ms: int = 2000
    server_timeout_ms: int = 60000

    def __post_init__(self) -> None:
        # HAProxy reads a socket path that does not start with "/" as host:port, so a
        # relative work dir (`runtime up --state-dir s`) would fail at start-up.
        object.__setattr__(self, "work_dir", self.work_dir.absolute())
        for header in self.route_headers:
            if not header or not all(c.isalnum() or c in "-_" for c in header):
                raise RouterError(f"route header {header!r}: only letters, digits, - and _")
        if not 1 <= self.slots <= 1000:
            raise RouterError(f"slots must be within 1..1000, got {self.slots}")

    @property
    def admin_socket(self) -> Path:
        return self.work_dir / "admin.sock"

    @property
    def config_file(self) -> Path:
        return self.work_dir / "haproxy.cfg"

    @property
    def pid_file(self) -> Path:
        return self.work_dir / "haproxy.pid"

    def inner_socket(self, backend: str) -> Path:
        return self.work_dir / f"{backend}.sock"


def map_path(layout: HAProxyLayout, header: str, kind: MatchKind) -> Path:
    """The map file holding `kind` routes on `header` (value -> route name)."""
    safe = "".join(c if c.isalnum() else "_" for c in header.lower())
    return layout.work_dir / f"route_{safe}_{kind.value}.map"


def _route_acls(layout: HAProxyLayout) -> list[str]:
    lines: list[str] = []
    names: list[str] = []
    for index, header in enumerate(layout.route_headers):
        for kind, converter in MAP_CONVERTERS.items():
            name = f"route_{index}_{kind.value}"
            path = map_path(layout, header, kind)
            fetch = f"req.fhdr({header.lower()},1)"  # the first occurrence, unsplit
            lines.append(f"    acl {name} {fetch},{converter}({path}) -m found")
            names.append(name)
    if names:
        lines.append(f"    use_backend canary if {' || '.join(names)}")
    return lines


def _destination_sections(layout: HAProxyLayout, backend: str) -> list[str]:
    return [
        f"frontend {backend}_in",
        f"    bind unix@{layout.inner_socket(backend)} mode 600",
        f"    default_backend {backend}",
        "",
        f"backend {backend}",
        "    balance roundrobin",
        # A refused connection is retried once, on another server of this backend.
        "    retries 1",
        "    option redispatch 1",
        f"    server-template s 1-{layout.slots} 127.0.0.1:9 disabled",
        "",
    ]


def render_config(layout: HAProxyLayout) -> str:
    lines = [
        "global",
        f"    stats socket {layout.admin_socket} mode 600 level admin",
        "    maxconn 4096",
        "    hard-stop-after 5s",
        "",
        "defaults",
        "    mode http",
        f"    timeout connect {layout.connect_timeout_ms}ms",
        "    timeout client 60s",
        f"    timeout server {layout.server_timeout_ms}ms",
        "    timeout http-keep-alive 60s",
        "",
        "frontend fe",
        f"    bind {layout.host}:{layout.port}",
        "    option forwardfor",
        *_route_acls(layout),
        "    default_backend split",
        "",
        "backend split",
        "    balance roundrobin",
        f"    server stable unix@{layout.inner_socket('stable')} weight 100",
        f"    server canary unix@{layout.inner_socket('canary')} weight 0",
        *(f"    server {extra} unix@{layout.inner_socket(extra)} weight 0"
          for extra in EXTRA_BACKENDS),
        "",
    ]
    for backend in ALL_BACKENDS:
        lines += _destination_sections(layout, backend)
    return "\n".join(lines)


def write_files(layout: HAProxyLayout) -> None:
    """The config and an empty map file for each header and match kind."""
    layout.work_dir.mkdir(parents=True, exist_ok=True)
    for header in layout.route_headers:
        for kind in MatchKind:
            map_path(layout, header, kind).write_text("")
    layout.config_file.write_text(render_config(layout))


def check_headers(layout: HAProxyLayout, headers: Sequence[str]) -> list[str]:
    """The headers a route uses that this HAProxy config cannot match on."""
    known = {h.lower() for h in layout.route_headers}
    return [h for h in headers if h.lower() not in known]
