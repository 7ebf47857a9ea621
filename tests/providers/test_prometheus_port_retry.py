"""The test Prometheus starts again on a new port when its probed port was taken meanwhile
(another xdist worker's process can bind it between the probe and Prometheus' listen)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

import prometheus_support
from prometheus_support import start_prometheus

pytestmark = pytest.mark.slow


def test_a_taken_port_is_retried_on_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = int(taken.getsockname()[1])
        probes: Iterator[int] = iter([busy, prometheus_support.free_port()])
        monkeypatch.setattr(prometheus_support, "free_port", lambda: next(probes))
        server = start_prometheus(tmp_path, [])
        try:
            assert next(probes, None) is None  # both probes used: the busy port was tried
            assert server.address != f"127.0.0.1:{busy}"
            assert httpx2.get(f"{server.url}/-/ready", timeout=5).status_code == 200
        finally:
            server.stop()
