"""Which of a Pod's init containers run now, and whether the Pod is initialized. Purely
computational over the kubelet's container records.

Init containers run one at a time, in order, each to a successful exit before the next
starts; the main containers start once all have. A failed one is restarted with the
back-off unless the Pod's `restartPolicy` is `Never`, which fails the Pod. A sidecar (an
init container with `restartPolicy: Always`) is started in its place in the order and the
next one starts once it has started (its `startupProbe`, if any, passed); it then keeps
running, is restarted whenever it exits, and is stopped after the main containers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.cluster.local.kubelet.containers import ContainerRun

__all__ = ["InitProgress", "container_policy", "init_progress", "is_sidecar"]


@dataclass(frozen=True)
class InitProgress:
    """`step`: the init containers to step now (the sidecars started so far, and the one
    being waited for); `initialized`: the main containers may run; `failed`: an init
    container failed for good (`restartPolicy: Never`), so the Pod has failed."""

    step: tuple[str, ...]
    initialized: bool
    failed: bool = False
    waiting_for: tuple[str, ...] = ()  # not yet complete, for the Initialized condition


def is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def container_policy(pod_policy: str, container: Mapping[str, Any], *, init: bool) -> str:
    """The restart policy one container runs under: a sidecar always restarts; an init
    container restarts on failure unless the Pod never restarts anything."""
    if not init:
        return pod_policy
    if is_sidecar(container):
        return "Always"
    return "Never" if pod_policy == "Never" else "OnFailure"


def _complete(container: Mapping[str, Any], run: ContainerRun) -> bool:
    if is_sidecar(container):
        return run.running and not run.startup_pending
    return run.done and (run.terminated or {}).get("exitCode") == 0


def init_progress(
    init_containers: Sequence[Mapping[str, Any]], runs: Mapping[str, ContainerRun]
) -> InitProgress:
    step: list[str] = []
    names = [str(c.get("name")) for c in init_containers]
    for index, container in enumerate(init_containers):
        run = runs[names[index]]
        if is_sidecar(container):
            step.append(names[index])
        if _complete(container, run):
            continue
        incomplete = tuple(n for c, n in zip(init_containers, names, strict=True)
                           if not _complete(c, runs[n]))
        if run.done:  # a plain init container that failed and will not be restarted
            return InitProgress(tuple(step), initialized=False, failed=True,
                                waiting_for=incomplete)
        if not is_sidecar(container):
            step.append(names[index])
        return InitProgress(tuple(step), initialized=False, waiting_for=incomplete)
    return InitProgress(tuple(step), initialized=True)
