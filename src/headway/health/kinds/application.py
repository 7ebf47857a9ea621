"""argoproj.io/Application health, for app-of-apps: the child Application's own health."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """The child's reported `status.health`; Progressing until it has one. This is the check
    Argo CD documents as an argocd-cm override; Headway ships it built in so sync waves of
    Applications wait for their children (see docs/compatibility.md)."""
    status = get(obj, "status", "health", "status")
    if status is None:
        return HealthResult(HealthStatus.PROGRESSING)
    message = get_str(obj, "status", "health", "message")
    try:
        return HealthResult(HealthStatus(str(status)), message)
    except ValueError:
        return HealthResult(HealthStatus.UNKNOWN, f"invalid health status {status!r}")
