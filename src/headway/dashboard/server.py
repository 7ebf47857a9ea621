"""Serving the dashboard next to the engine: the web server on the event loop, the watch
threads that feed its live updates, and the token made at the first start.

    async with DashboardServer(cluster=..., clock=..., state_dir=..., address=..., port=...):
        ...  # the engine runs meanwhile
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import uvicorn

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.dashboard.access import TOKEN_FILE, Sessions, ensure_token
from headway.dashboard.live import Hub, start_watching
from headway.dashboard.traffic import TrafficObserver
from headway.dashboard.web import Dashboard, create_app
from headway.source.git import GitCache

__all__ = ["DashboardServer", "commit_message_reader", "is_loopback"]

log = logging.getLogger(__name__)


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def commit_message_reader(git: GitCache) -> Callable[[str, str], str | None]:
    """The first line of a commit's message, when the cache already has the commit (the
    dashboard never fetches: a page must not wait on the network)."""

    def read(url: str, revision: str) -> str | None:
        try:
            message = git.repository(url).commit(revision).message
        except Exception:  # unknown revision, not fetched yet, not a Git source
            return None
        return message.strip().splitlines()[0] if message.strip() else None

    return read


class _EmbeddedServer(uvicorn.Server):
    """Leaves signals to the program it runs in: `headway serve` stops everything on SIGTERM,
    and uvicorn's own handlers would replace serve's."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off only on sockets that say they are TCP (with
    # proto 0, every kept-alive response waited 40 ms for a delayed ACK).
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((address, port))
        listening.listen(128)
    except OSError:
        listening.close()
        raise
    listening.set_inheritable(True)
    return listening


@dataclass(frozen=True)
class Started:
    url: str
    new_token: str | None  # printed once by the caller when this start made it
    token_file: Path


class DashboardServer:
    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        state_dir: Path,
        address: str = "127.0.0.1",
        port: int = 0,
        git: GitCache | None = None,
    ) -> None:
        self._cluster, self._state_dir = cluster, state_dir
        self._address, self._port = address, port
        check, self._new_token = ensure_token(state_dir)
        self.board = Dashboard(
            cluster=cluster, state_dir=state_dir, clock=clock, token=check,
            sessions=Sessions(), commit_message=commit_message_reader(git) if git else None,
            traffic=TrafficObserver(state_dir),
        )
        self._stop = threading.Event()
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._watchers: list[threading.Thread] = []

    async def start(self) -> Started:
        """Listen and start following the store; an OSError when the port is taken."""
        self.board.hub = Hub(asyncio.get_running_loop())
        listening = _listen(self._address, self._port)  # a taken port fails here, plainly
        config = uvicorn.Config(
            create_app(self.board), log_level="warning", lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self._server = _EmbeddedServer(config)
        self._port = int(listening.getsockname()[1])
        self._task = asyncio.create_task(self._server.serve(sockets=[listening]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise OSError(f"the dashboard stopped while starting on {self.url}")
            await asyncio.sleep(0.01)
        self._watchers = start_watching(self._cluster, self.board.hub, self._stop)
        return Started(self.url, self._new_token, self._state_dir / TOKEN_FILE)

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self._address}]" if ":" in self._address else self._address
        return f"http://{host}:{self.port}/"

    async def stop(self) -> None:
        """Stop serving, and wait for the watch threads (the store may close next)."""
        self._stop.set()
        if self.board.hub is not None:
            self.board.hub.close()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        for thread in self._watchers:
            await asyncio.to_thread(thread.join)

    async def __aenter__(self) -> Started:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
