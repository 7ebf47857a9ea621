"""batch/Job health, from its Complete, Failed and Suspended conditions."""

from __future__ import annotations

from typing import Any

from headway.health.fields import conditions, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Progressing until a terminal condition appears; Failed wins over Suspended, which wins
    over Complete. (As in Argo CD, any Suspended condition ends Progressing; only a true one
    makes the Job Suspended.)"""
    failed = complete = suspended = False
    message = fail_message = ""
    for condition in conditions(obj):
        kind = condition.get("type")
        if kind == "Failed":
            failed = complete = True
            fail_message = get_str(condition, "message")
        elif kind in ("Complete", "Suspended"):
            complete = True
            message = get_str(condition, "message")
            suspended = suspended or (kind == "Suspended" and condition.get("status") == "True")
    if not complete:
        return HealthResult(HealthStatus.PROGRESSING, message)
    if failed:
        return HealthResult(HealthStatus.DEGRADED, fail_message)
    if suspended:
        return HealthResult(HealthStatus.SUSPENDED, fail_message)
    return HealthResult(HealthStatus.HEALTHY, message)
