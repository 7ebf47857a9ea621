"""`lifecycle.preStop` hooks: what runs before a container is sent SIGTERM.

A hook is `exec` (a command with the container's env and working dir), `httpGet` or
`tcpSocket` (against the container's port), or `sleep: {seconds: N}`. As on Kubernetes the
hook runs inside the termination grace period: SIGTERM follows when the hook ends or the
grace period runs out, and SIGKILL when the rest of the period has passed. A failing hook
does not stop the termination.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from headway.clock import Clock
from headway.cluster.local.kubelet import probes

__all__ = ["PreStop", "pre_stop_hook"]

PreStop = Callable[[float], Awaitable[None]]
"""Run the hook within `budget` seconds."""


def pre_stop_hook(
    container: Mapping[str, Any], target: probes.ProbeTarget, clock: Clock
) -> PreStop | None:
    """The container's preStop hook, ready to run; None when it has none."""
    handler = (container.get("lifecycle") or {}).get("preStop") or {}
    if not handler:
        return None
    if "sleep" in handler:
        seconds = float((handler["sleep"] or {}).get("seconds") or 0)

        async def sleep(budget: float) -> None:
            await clock.sleep(min(seconds, budget))

        return sleep
    spec = probes.parse_probe(handler)
    if spec is None:
        return None

    async def run(budget: float) -> None:
        await probes.run_check(replace(spec, timeout_seconds=max(budget, 0.001)), target)

    return run
