"""A bounded traffic generator for the demo: a few threads sending GET / to one loopback
address at a capped total rate, counting answers by the version the app reports.

The app answers `<version> <pod>`, so every answer says which release served it; a refused
connection or a timeout counts as an error of no version. It only ever talks to 127.0.0.1.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from dataclasses import dataclass

__all__ = ["TrafficCounts", "TrafficGenerator", "traffic_since"]

NO_ANSWER = "(no answer)"
NOT_THE_APP = "(router)"  # an answer the app did not write (e.g. 503 with no endpoint)


@dataclass(frozen=True)
class TrafficCounts:
    """Answers per (version, HTTP status); status 0 is no answer."""

    by_version_status: dict[tuple[str, int], int]

    def served(self, version: str) -> int:
        return sum(n for (v, _), n in self.by_version_status.items() if v == version)

    def failed(self, version: str) -> int:
        return sum(
            n for (v, code), n in self.by_version_status.items() if v == version and code >= 500
        )

    @property
    def total(self) -> int:
        return sum(self.by_version_status.values())


def traffic_since(before: TrafficCounts | None, now: TrafficCounts) -> str:
    """`v2 180 (0 failed) · v3 20 (6 failed)`: answers per version between two tallies."""
    earlier = before.by_version_status if before else {}
    delta = {k: n - earlier.get(k, 0) for k, n in now.by_version_status.items()}
    versions = sorted({v for (v, _), n in delta.items() if n > 0})
    parts = []
    for version in versions:
        served = sum(n for (v, _), n in delta.items() if v == version)
        failed = sum(
            n for (v, code), n in delta.items() if v == version and (code >= 500 or code == 0)
        )
        parts.append(f"{version} {served} ({failed} failed)")
    return " · ".join(parts)


class TrafficGenerator:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        versions: frozenset[str],
        rate: float = 40.0,
        workers: int = 4,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the demo's traffic stays on loopback, not {host}")
        self._host, self._port = host, port
        self._versions = versions
        self._interval = workers / max(rate, 1.0)  # each worker's share of the rate
        self._workers = workers
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, int]] = Counter()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for index in range(self._workers):
            thread = threading.Thread(target=self._run, name=f"demo-traffic-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def counts(self) -> TrafficCounts:
        with self._lock:
            return TrafficCounts(dict(self._counts))

    def _run(self) -> None:
        connection: http.client.HTTPConnection | None = None
        while not self._stop.is_set():
            started = time.monotonic()
            if connection is None:
                connection = http.client.HTTPConnection(self._host, self._port, timeout=2)
            version, status = self._one(connection)
            if status == 0:
                connection.close()
                connection = None
            with self._lock:
                self._counts[(version, status)] += 1
            self._stop.wait(max(0.0, self._interval - (time.monotonic() - started)))
        if connection is not None:
            connection.close()

    def _one(self, connection: http.client.HTTPConnection) -> tuple[str, int]:
        try:
            connection.request("GET", "/")
            response = connection.getresponse()
            body = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            return NO_ANSWER, 0
        version = body.split(" ", 1)[0].strip()
        return (version if version in self._versions else NOT_THE_APP), response.status
