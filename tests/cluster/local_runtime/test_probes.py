"""Probe thresholds (pure) and real checks against real sockets and commands."""

from __future__ import annotations

import asyncio
import sys

import pytest

from headway.cluster.local.kubelet import probes
from headway.cluster.local.kubelet.network import free_port


def _fold(spec: probes.ProbeSpec, results: list[bool], start: bool) -> list[bool]:
    state = probes.ProbeState(passing=start)
    seen = []
    for ok in results:
        state = probes.observe(spec, state, ok)
        seen.append(state.passing)
    return seen


def test_failure_threshold_needs_consecutive_failures() -> None:
    spec = probes.ProbeSpec(kind="tcpSocket", failure_threshold=3)
    assert _fold(spec, [False, False, True, False, False, False], True) == [
        True,
        True,
        True,
        True,
        True,
        False,
    ]


def test_success_threshold_needs_consecutive_successes() -> None:
    spec = probes.ProbeSpec(kind="tcpSocket", success_threshold=2, failure_threshold=1)
    assert _fold(spec, [True, False, True, True, False], False) == [
        False,
        False,
        False,
        True,
        False,
    ]


def test_parse_probe_defaults() -> None:
    spec = probes.parse_probe({"httpGet": {"path": "/readyz", "port": 8080}})
    assert spec is not None
    assert (
        spec.period_seconds,
        spec.timeout_seconds,
        spec.failure_threshold,
        spec.success_threshold,
    ) == (10, 1, 3, 1)
    assert probes.parse_probe(None) is None


async def _serve(status: int) -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    port = free_port()
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    return server, port


@pytest.mark.parametrize(("status", "ok"), [(200, True), (302, True), (503, False)])
async def test_http_probe_against_a_real_server(status: int, ok: bool) -> None:
    server, port = await _serve(status)
    async with server:
        target = probes.ProbeTarget(port=port, declared_ports={"http": 8080}, env={}, cwd=".")
        # the declared containerPort 8080 means the container's own local port
        outcome = await probes.run_check(
            probes.ProbeSpec(kind="httpGet", port=8080, path="/"), target
        )
    assert outcome.ok is ok
    if not ok:
        assert "statuscode: 503" in outcome.message


async def test_tcp_probe_fails_on_a_closed_port() -> None:
    target = probes.ProbeTarget(port=free_port(), declared_ports={}, env={}, cwd=".")
    outcome = await probes.run_check(probes.ProbeSpec(kind="tcpSocket", port="http"), target)
    assert not outcome.ok
    assert "dial tcp" in outcome.message


@pytest.mark.parametrize(("code", "ok"), [(0, True), (1, False)])
async def test_exec_probe(code: int, ok: bool) -> None:
    target = probes.ProbeTarget(port=1, declared_ports={}, env={}, cwd=".")
    spec = probes.ProbeSpec(
        kind="exec", command=(sys.executable, "-c", f"raise SystemExit({code})"), timeout_seconds=10
    )
    assert (await probes.run_check(spec, target)).ok is ok


async def test_exec_probe_times_out() -> None:
    target = probes.ProbeTarget(port=1, declared_ports={}, env={}, cwd=".")
    spec = probes.ProbeSpec(
        kind="exec",
        command=(sys.executable, "-c", "import time; time.sleep(30)"),
        timeout_seconds=0.5,
    )
    outcome = await probes.run_check(spec, target)
    assert not outcome.ok and "timed out" in outcome.message
