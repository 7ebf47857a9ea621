"""batch/CronJob health (Argo CD ships this as a built-in Lua check)."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Healthy unless the last scheduled run is known to have failed: suspended, never run,
    never yet succeeded and running are all Healthy, as in Argo CD; Degraded when no job is
    active and the last success predates the last schedule. Progressing without status."""
    if get(obj, "spec", "suspend") is True:
        return HealthResult(HealthStatus.HEALTHY, "CronJob is Suspended")
    if not isinstance(get(obj, "status"), dict):
        return HealthResult(HealthStatus.PROGRESSING, "Waiting for CronJob")
    scheduled = get_str(obj, "status", "lastScheduleTime")
    succeeded = get_str(obj, "status", "lastSuccessfulTime")
    if not scheduled:
        return HealthResult(HealthStatus.HEALTHY, "CronJob has not been scheduled yet")
    if not succeeded:
        return HealthResult(
            HealthStatus.HEALTHY, "The CronJob never completed successfully. It may not be healthy"
        )
    active = get(obj, "status", "active")
    if isinstance(active, list) and active:
        return HealthResult(
            HealthStatus.HEALTHY,
            "The job is running. Its last execution may not have been successful",
        )
    if succeeded < scheduled:  # RFC 3339 UTC timestamps order as text
        return HealthResult(
            HealthStatus.DEGRADED, "CronJob has not completed its last execution successfully"
        )
    return HealthResult(
        HealthStatus.HEALTHY, "CronJob has completed its last execution successfully"
    )
