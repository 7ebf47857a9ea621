"""Readiness and liveness probes: the spec, the pure threshold logic, and the real checks.

Thresholds follow the kubelet: a probe's result flips to failure after `failureThreshold`
consecutive failures (default 3) and back to success after `successThreshold` consecutive
successes (default 1). Before its first result a readiness probe counts as failing and a
liveness probe as passing. Probes start `initialDelaySeconds` after the container starts,
then run every `periodSeconds` (default 10), each bounded by `timeoutSeconds` (default 1).
An HTTP probe passes on a status from 200 to 399.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from headway.clock import Clock

__all__ = [
    "ProbeOutcome",
    "ProbeSpec",
    "ProbeState",
    "ProbeTarget",
    "observe",
    "parse_probe",
    "run_check",
    "run_probe_loop",
]


@dataclass(frozen=True)
class ProbeSpec:
    kind: str  # "httpGet" | "tcpSocket" | "exec"
    port: int | str | None = None
    path: str = "/"
    host: str = "127.0.0.1"
    scheme: str = "HTTP"
    headers: tuple[tuple[str, str], ...] = ()
    command: tuple[str, ...] = ()
    initial_delay_seconds: float = 0.0
    period_seconds: float = 10.0
    timeout_seconds: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3


def parse_probe(raw: Mapping[str, Any] | None) -> ProbeSpec | None:
    """A probe from its manifest, with the kubelet's defaults; None when absent."""
    if not raw:
        return None
    timing = {
        "initial_delay_seconds": float(raw.get("initialDelaySeconds") or 0),
        "period_seconds": float(raw.get("periodSeconds") or 10),
        "timeout_seconds": float(raw.get("timeoutSeconds") or 1),
        "success_threshold": int(raw.get("successThreshold") or 1),
        "failure_threshold": int(raw.get("failureThreshold") or 3),
    }
    if "httpGet" in raw:
        http = raw["httpGet"] or {}
        headers = tuple((str(h["name"]), str(h["value"])) for h in http.get("httpHeaders") or [])
        return ProbeSpec(
            kind="httpGet",
            port=http.get("port"),
            path=str(http.get("path") or "/"),
            scheme=str(http.get("scheme") or "HTTP"),
            headers=headers,
            **timing,  # type: ignore[arg-type]
        )
    if "tcpSocket" in raw:
        return ProbeSpec(kind="tcpSocket", port=(raw["tcpSocket"] or {}).get("port"), **timing)  # type: ignore[arg-type]
    if "exec" in raw:
        command = tuple(str(c) for c in (raw["exec"] or {}).get("command") or [])
        return ProbeSpec(kind="exec", command=command, **timing)  # type: ignore[arg-type]
    return None


@dataclass(frozen=True)
class ProbeState:
    """The probe's current verdict and the streaks that move it."""

    passing: bool
    successes: int = 0
    failures: int = 0
    message: str = ""
    observed: bool = False


def observe(spec: ProbeSpec, state: ProbeState, ok: bool, message: str = "") -> ProbeState:
    """Purely computational: fold one check result into the state by the thresholds."""
    if ok:
        successes = state.successes + 1
        passing = state.passing or successes >= spec.success_threshold
        return ProbeState(passing, successes, 0, "", True)
    failures = state.failures + 1
    passing = state.passing and failures < spec.failure_threshold
    return replace(
        state, passing=passing, successes=0, failures=failures, message=message, observed=True
    )


@dataclass(frozen=True)
class ProbeTarget:
    """Where a container's probes go: its local port, and the env/cwd for exec probes."""

    port: int
    declared_ports: Mapping[str, int]  # containerPort names -> numbers
    env: Mapping[str, str]
    cwd: str
    # declared port (number or name) -> its own local port, for a Pod declaring several
    local_ports: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeOutcome:
    ok: bool
    message: str


def _local_port(spec: ProbeSpec, target: ProbeTarget) -> int:
    """A declared port (by number or name) means its local port; any other name, or a
    declared port of a container without several, the container's own local port."""
    port = spec.port
    if port is not None and str(port) in target.local_ports:
        return target.local_ports[str(port)]
    if port is None or (isinstance(port, str) and not port.isdigit()):
        return target.port
    number = int(port)
    declared = set(target.declared_ports.values())
    return target.port if (not declared or number in declared) else number


async def run_check(spec: ProbeSpec, target: ProbeTarget) -> ProbeOutcome:
    """Run one check, bounded by `timeoutSeconds`."""
    try:
        return await asyncio.wait_for(_check(spec, target), timeout=spec.timeout_seconds)
    except TimeoutError:
        return ProbeOutcome(False, f"{spec.kind} probe timed out after {spec.timeout_seconds:g}s")


async def _check(spec: ProbeSpec, target: ProbeTarget) -> ProbeOutcome:
    if spec.kind == "exec":
        return await _exec_check(spec, target)
    port = _local_port(spec, target)
    try:
        reader, writer = await asyncio.open_connection(spec.host, port)
    except OSError as err:
        return ProbeOutcome(False, f"dial tcp {spec.host}:{port}: {err.strerror or err}")
    try:
        if spec.kind == "tcpSocket":
            return ProbeOutcome(True, "")
        return await _http_check(spec, reader, writer, port)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _http_check(
    spec: ProbeSpec, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int
) -> ProbeOutcome:
    headers = "".join(f"{k}: {v}\r\n" for k, v in spec.headers)
    request = (
        f"GET {spec.path} HTTP/1.1\r\nHost: {spec.host}:{port}\r\n"
        f"User-Agent: headway-probe\r\nConnection: close\r\n{headers}\r\n"
    )
    writer.write(request.encode())
    await writer.drain()
    status_line = (await reader.readline()).decode(errors="replace").split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        return ProbeOutcome(False, f"GET {spec.path}: no HTTP status in the answer")
    code = int(status_line[1])
    if 200 <= code < 400:
        return ProbeOutcome(True, "")
    return ProbeOutcome(False, f"HTTP probe failed with statuscode: {code}")


async def _exec_check(spec: ProbeSpec, target: ProbeTarget) -> ProbeOutcome:
    if not spec.command:
        return ProbeOutcome(False, "exec probe has no command")
    try:
        proc = await asyncio.create_subprocess_exec(
            *spec.command,
            env=dict(target.env),
            cwd=target.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as err:
        return ProbeOutcome(False, f"exec {spec.command[0]}: {err}")
    try:
        output, _ = await proc.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise
    if proc.returncode == 0:
        return ProbeOutcome(True, "")
    text = output.decode(errors="replace").strip()[-200:]
    return ProbeOutcome(False, f"command exited {proc.returncode}: {text}")


async def run_probe_loop(
    *,
    spec: ProbeSpec,
    target: ProbeTarget,
    clock: Clock,
    on_result: Callable[[ProbeState], Awaitable[None] | None],
    initial: ProbeState,
) -> None:
    """Probe forever on the spec's schedule, reporting each new state; cancel to stop."""
    state = initial
    await clock.sleep(spec.initial_delay_seconds)
    while True:
        outcome = await run_check(spec, target)
        state = observe(spec, state, outcome.ok, outcome.message)
        result = on_result(state)
        if result is not None:
            await result
        await clock.sleep(spec.period_seconds)
