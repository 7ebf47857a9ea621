"""A real Prometheus (Debian's /usr/bin/prometheus) for tests, and a tiny exporter to scrape.

    async def test_x(prometheus: StartPrometheus, exporter: StartExporter) -> None:
        source = exporter('demo_total{job="a"} 3\n')
        server = prometheus([source.address])
        await server.wait_for('demo_total', lambda v: v == 3)

Each server listens on 127.0.0.1 on a free port with its own temporary config and data
directory, scrapes every second, and is stopped by its PID at teardown. Registered for every
test through `pytest_plugins` in tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conftest import require_program

READY_SECONDS = 60.0  # a bound for a loaded 2-core CI box; polled, so no cost when fast
WAIT_SECONDS = 25.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PortTakenError(RuntimeError):
    """Prometheus could not listen: another process bound the probed port first."""


def start_prometheus(work_dir: Path, targets: Sequence[tuple[str, int]]) -> PrometheusServer:
    """A ready server. Its port is probed then released before Prometheus binds it, so another
    process (a test in another xdist worker) can take it in between; Prometheus then exits with
    'address already in use' and is started again on a new port."""
    for _ in range(5):
        server = PrometheusServer(work_dir, targets)
        try:
            server.wait_ready()
        except PortTakenError:
            server.stop()
            continue
        except BaseException:
            server.stop()
            raise
        return server
    raise RuntimeError("prometheus found no free port in 5 tries")


class PrometheusServer:
    """One Prometheus process scraping `targets` (host, port) at `/metrics` every second."""

    def __init__(self, work_dir: Path, targets: Sequence[tuple[str, int]]) -> None:
        work_dir.mkdir(parents=True, exist_ok=True)
        listed = ", ".join(f"'{host}:{port}'" for host, port in targets)
        config = work_dir / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: test\n"
            f"    static_configs: [{{targets: [{listed}]}}]\n"
        )
        self.address = f"127.0.0.1:{free_port()}"
        self.url = f"http://{self.address}"
        self.process = subprocess.Popen(
            [
                require_program("prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={work_dir / 'data'}",
                f"--web.listen-address={self.address}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(work_dir / "prometheus.log").open("wb"),
        )
        self.pid = self.process.pid
        self.log = work_dir / "prometheus.log"

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log.read_text(errors="replace")
                if "address already in use" in log:
                    raise PortTakenError(self.address)
                raise RuntimeError(
                    f"prometheus exited with {self.process.returncode}: {log[-800:]}"
                )
            try:
                if httpx2.get(f"{self.url}/-/ready", timeout=1.0).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError("prometheus did not become ready")

    def query_now(self, promql: str) -> list[float] | None:
        """`query` for synchronous callers (module-scoped fixtures)."""
        try:
            answer = httpx2.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=5)
        except httpx2.TransportError:
            return None
        result = answer.json().get("data", {}).get("result", [])
        return [float(series["value"][1]) for series in result]

    def wait_for_now(self, promql: str, accept: Callable[[list[float]], bool]) -> list[float]:
        """`wait_for` for synchronous callers."""
        deadline = time.monotonic() + WAIT_SECONDS
        values: list[float] | None = None
        while time.monotonic() < deadline:
            values = self.query_now(promql)
            if values is not None and accept(values):
                return values
            time.sleep(0.2)
        raise AssertionError(f"{promql} never satisfied; last values {values}")

    async def query(self, promql: str) -> list[float] | None:
        """The instant vector's values, or None while the server cannot answer."""
        try:
            async with httpx2.AsyncClient() as client:
                answer = await client.get(f"{self.url}/api/v1/query", params={"query": promql})
        except httpx2.TransportError:
            return None
        result = answer.json().get("data", {}).get("result", [])
        return [float(series["value"][1]) for series in result]

    async def wait_for(self, promql: str, accept: Callable[[list[float]], bool]) -> list[float]:
        """Poll until the query's values are accepted (the scrape has landed), with a deadline."""
        deadline = time.monotonic() + WAIT_SECONDS
        values: list[float] | None = None
        while time.monotonic() < deadline:
            values = await self.query(promql)
            if values is not None and accept(values):
                return values
            await asyncio.sleep(0.2)
        raise AssertionError(f"{promql} never satisfied; last values {values}")

    def stop(self) -> None:
        """Stop by PID (SIGTERM, then SIGKILL) and reap the process."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.process.wait(timeout=5)


class Exporter:
    """A real HTTP server answering `GET /metrics` with whatever `text` currently holds."""

    def __init__(self, text: str) -> None:
        self.text = text
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = owner.text.encode()
                self.send_response(200 if self.path.startswith("/metrics") else 404)
                self.send_header("content-type", "text/plain; version=0.0.4")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


StartPrometheus = Callable[[Sequence[tuple[str, int]]], PrometheusServer]
StartExporter = Callable[[str], Exporter]


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[StartPrometheus]:
    """Start real Prometheus servers scraping the given targets; all stopped at teardown."""
    started: list[PrometheusServer] = []

    def start(targets: Sequence[tuple[str, int]]) -> PrometheusServer:
        server = start_prometheus(tmp_path / f"prometheus-{len(started)}", targets)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def exporter() -> Iterator[StartExporter]:
    """Start small /metrics exporters serving text the test sets (and may change)."""
    started: list[Exporter] = []

    def start(text: str) -> Exporter:
        started.append(Exporter(text))
        return started[-1]

    yield start
    for server in started:
        server.stop()
