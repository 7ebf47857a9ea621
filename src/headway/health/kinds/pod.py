"""core/Pod health, as Argo CD assesses it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.health.fields import find_condition, get, get_int, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

_ALWAYS = "Always"


def assess(obj: Any) -> HealthResult:
    """Long-running pods (restartPolicy Always, the default) are Degraded while a container
    waits in an error state (Err*, *Error, *BackOff) and Healthy once Ready; run-to-completion
    pods stay Progressing while running and become Healthy only on success."""
    restart_policy = get_str(obj, "spec", "restartPolicy", default=_ALWAYS)
    message = get_str(obj, "status", "message")
    if restart_policy == _ALWAYS:
        waiting = _waiting_errors(obj)
        if waiting:
            return HealthResult(HealthStatus.DEGRADED, ", ".join(waiting))
    phase = get_str(obj, "status", "phase")
    if phase == "Pending":
        return HealthResult(HealthStatus.PROGRESSING, message)
    if phase == "Succeeded":
        return HealthResult(HealthStatus.HEALTHY, message)
    if phase == "Failed":
        return HealthResult(HealthStatus.DEGRADED, message or _failure_message(obj))
    if phase == "Running":
        return _running(obj, restart_policy=restart_policy, message=message)
    return HealthResult(HealthStatus.UNKNOWN, message)


def _running(obj: Any, *, restart_policy: str, message: str) -> HealthResult:
    if restart_policy != _ALWAYS:
        return HealthResult(HealthStatus.PROGRESSING, message)
    ready = find_condition(obj, "Ready")
    if ready is not None and ready.get("status") == "True":
        return HealthResult(HealthStatus.HEALTHY, message)
    for status in _statuses(obj, "containerStatuses"):
        if get(status, "lastState", "terminated") is not None:
            return HealthResult(HealthStatus.DEGRADED, message)
    return HealthResult(HealthStatus.PROGRESSING, message)


def _statuses(obj: Any, key: str) -> list[Mapping[str, Any]]:
    raw = get(obj, "status", key)
    return [s for s in raw if isinstance(s, Mapping)] if isinstance(raw, list) else []


def _waiting_errors(obj: Any) -> list[str]:
    messages = []
    for status in _statuses(obj, "containerStatuses"):
        reason = get_str(status, "state", "waiting", "reason")
        if get(status, "state", "waiting") is None:
            continue
        if reason.startswith("Err") or reason.endswith(("Error", "BackOff")):
            messages.append(get_str(status, "state", "waiting", "message"))
    return messages


def _failure_message(obj: Any) -> str:
    for status in _statuses(obj, "initContainerStatuses") + _statuses(obj, "containerStatuses"):
        terminated = get(status, "state", "terminated")
        if not isinstance(terminated, Mapping):
            continue
        if get_str(terminated, "message"):
            return get_str(terminated, "message")
        if get_str(terminated, "reason") == "OOMKilled":
            return "OOMKilled"
        code = get_int(terminated, "exitCode")
        if code != 0:
            return f'container "{get_str(status, "name")}" failed with exit code {code}'
    return ""
