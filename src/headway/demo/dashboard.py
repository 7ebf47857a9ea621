"""The demo's dashboard: `headway serve --ui-port` on a free loopback port, and its URL and
token as serve announced them in its log (serve prints the token once, the first time it makes
it; the demo's state directory is new, so it is always there)."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass

from headway.demo.layout import DemoLayout
from headway.demo.waiting import WaitTimedOut, wait_until

__all__ = ["DashboardAddress", "announced_dashboard", "free_port"]

_URL_PREFIX = "dashboard at "
_TOKEN_PREFIX = "dashboard token ("


@dataclass(frozen=True)
class DashboardAddress:
    url: str
    token: str  # "" when serve did not print one (a token made by an earlier start)


def free_port() -> int:
    """A loopback port nothing listens on now (serve binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _read(layout: DemoLayout) -> DashboardAddress | None:
    url, token = "", ""
    with contextlib.suppress(OSError):
        for line in layout.serve_log.read_text(errors="replace").splitlines():
            if line.startswith(_URL_PREFIX):
                url = line.removeprefix(_URL_PREFIX).strip()
            elif line.startswith(_TOKEN_PREFIX):
                token = line.rsplit(" ", 1)[-1].strip()
    return DashboardAddress(url, token) if url else None


def announced_dashboard(layout: DemoLayout, *, timeout: float = 20.0) -> DashboardAddress | None:
    """The dashboard serve announced, or None when it announced none in time (the demo goes
    on without it: the dashboard is for looking, not for the demo's checks)."""
    try:
        return wait_until(
            lambda: _read(layout), bool, timeout=timeout, what="the dashboard's address",
            interval=0.1,
        )
    except WaitTimedOut:
        return None
