"""argoproj.io/Application health, for app-of-apps: the child Application's own health,
unless the child reports an error that keeps it from ever getting there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.health.fields import get, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

# Conditions that say the child cannot deliver its desired state until someone changes
# something: its source does not render, its spec is invalid, its automated sync gave up.
BLOCKING_CONDITIONS = ("InvalidSpecError", "ComparisonError", "SyncError")


def assess(obj: Any) -> HealthResult:
    """Degraded with the child's error when it has one of `BLOCKING_CONDITIONS`; otherwise
    the child's reported `status.health`, Progressing until it has one. The latter is the
    check Argo CD documents as an argocd-cm override; Headway ships it built in so sync waves
    of Applications wait for their children, and a parent never waits on a child that can
    only stay broken (see docs/compatibility.md)."""
    blocking = _blocking_condition(obj)
    if blocking is not None:
        return HealthResult(HealthStatus.DEGRADED, blocking)
    status = get(obj, "status", "health", "status")
    if status is None:
        return HealthResult(HealthStatus.PROGRESSING)
    message = get_str(obj, "status", "health", "message")
    try:
        return HealthResult(HealthStatus(str(status)), message)
    except ValueError:
        return HealthResult(HealthStatus.UNKNOWN, f"invalid health status {status!r}")


def _blocking_condition(obj: Any) -> str | None:
    """`<type>: <message>` of the child's first blocking condition."""
    conditions = get(obj, "status", "conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") in BLOCKING_CONDITIONS:
            return f"{condition['type']}: {condition.get('message') or 'no message'}"
    return None
