"""Keep-alive connections to backend endpoints, reused across requests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

__all__ = ["ConnectFailed", "UpstreamConnection", "UpstreamPool"]


class ConnectFailed(Exception):
    """No connection could be opened to an endpoint (refused, unreachable, timed out)."""


@dataclass(frozen=True)
class UpstreamConnection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    reused: bool

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


class UpstreamPool:
    """Idle connections per (host, port); at most `idle_per_endpoint` kept for each."""

    def __init__(self, *, idle_per_endpoint: int = 32, connect_timeout: float = 5.0) -> None:
        self._idle: dict[tuple[str, int], list[UpstreamConnection]] = {}
        self._idle_per_endpoint = idle_per_endpoint
        self._connect_timeout = connect_timeout

    def take_idle(self, host: str, port: int) -> UpstreamConnection | None:
        idle = self._idle.get((host, port), [])
        while idle:
            connection = idle.pop()
            if connection.usable():
                return UpstreamConnection(connection.reader, connection.writer, reused=True)
            connection.close()
        return None

    async def open(self, host: str, port: int) -> UpstreamConnection:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), self._connect_timeout
            )
        except (OSError, TimeoutError) as error:
            raise ConnectFailed(f"cannot connect to {host}:{port}: {error}") from error
        return UpstreamConnection(reader, writer, reused=False)

    def give_back(self, host: str, port: int, connection: UpstreamConnection) -> None:
        idle = self._idle.setdefault((host, port), [])
        if connection.usable() and len(idle) < self._idle_per_endpoint:
            idle.append(connection)
        else:
            connection.close()

    def forget_except(self, keep: set[tuple[str, int]]) -> None:
        """Close idle connections to endpoints that are no longer destinations."""
        for address in [a for a in self._idle if a not in keep]:
            for connection in self._idle.pop(address):
                connection.close()

    def close_all(self) -> None:
        self.forget_except(set())
