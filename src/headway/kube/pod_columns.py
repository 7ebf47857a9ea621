"""A Pod's READY, STATUS and RESTARTS as `kubectl get pods` prints them. Purely computational.

STATUS follows kubectl's printer: while init containers run it is `Init:<done>/<total>`,
`Init:<reason>` for one waiting with a reason (`Init:CrashLoopBackOff`) or terminated with
a failure (`Init:Error`, `Init:ExitCode:N` without a reason); afterwards a main container's
waiting or terminated reason, the last container's first; `Terminating` once deleted.
A sidecar (an init container with `restartPolicy: Always`) that has started counts as
complete and, like kubectl, adds to READY's total and count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["pod_ready_text", "pod_restarts", "pod_status_text"]


def _statuses(pod: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    found = (pod.get("status") or {}).get(key) or []
    return [s for s in found if isinstance(s, Mapping)]


def _sidecar_names(pod: Mapping[str, Any]) -> set[str]:
    inits = (pod.get("spec") or {}).get("initContainers") or []
    return {str(c.get("name")) for c in inits if c.get("restartPolicy") == "Always"}


def _terminated_reason(state: Mapping[str, Any], prefix: str) -> str:
    if state.get("reason"):
        return f"{prefix}{state['reason']}"
    if state.get("signal"):
        return f"{prefix}Signal:{state['signal']}"
    return f"{prefix}ExitCode:{state.get('exitCode', 0)}"


def _init_reason(pod: Mapping[str, Any]) -> str | None:
    """The STATUS while init containers have not all completed; None once they have."""
    sidecars = _sidecar_names(pod)
    statuses = _statuses(pod, "initContainerStatuses")
    total = len((pod.get("spec") or {}).get("initContainers") or [])
    for index, status in enumerate(statuses):
        state = status.get("state") or {}
        terminated = state.get("terminated") or {}
        waiting = state.get("waiting") or {}
        if terminated and terminated.get("exitCode") == 0:
            continue
        if status.get("name") in sidecars and status.get("started"):
            continue
        if terminated:
            return _terminated_reason(terminated, "Init:")
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}"
        return f"Init:{index}/{total}"
    return None


def _initialized(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conditions)


def _main_reason(pod: Mapping[str, Any], reason: str) -> str:
    running = False
    for status in reversed(_statuses(pod, "containerStatuses")):
        state = status.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = str(state["waiting"]["reason"])
        elif state.get("terminated"):
            reason = _terminated_reason(state["terminated"], "")
        elif status.get("ready") and state.get("running"):
            running = True
    if reason == "Completed" and running:
        return "Running"
    return reason


def pod_status_text(pod: Mapping[str, Any]) -> str:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    init = _init_reason(pod)
    if init is not None and not _initialized(pod):
        return init
    status = pod.get("status") or {}
    return _main_reason(pod, str(status.get("reason") or status.get("phase") or "Pending"))


def pod_ready_text(pod: Mapping[str, Any]) -> str:
    sidecars = _sidecar_names(pod)
    mains = _statuses(pod, "containerStatuses")
    started = [s for s in _statuses(pod, "initContainerStatuses") if s.get("name") in sidecars]
    ready = sum(1 for s in [*mains, *started] if s.get("ready"))
    total = len((pod.get("spec") or {}).get("containers") or []) + len(sidecars)
    return f"{ready}/{total}"


def pod_restarts(pod: Mapping[str, Any]) -> int:
    every: Sequence[Mapping[str, Any]] = [*_statuses(pod, "initContainerStatuses"),
                                          *_statuses(pod, "containerStatuses")]
    return sum(int(s.get("restartCount") or 0) for s in every)
