"""argoproj.io/ApplicationSet health, for an Application that deploys ApplicationSets: from
the set's conditions, as Argo CD computes it — Degraded on ErrorOccurred, Progressing while a
RollingSync is under way, Healthy when its Applications are up to date.

One difference: a set no controller has looked at yet (no conditions) is Progressing, not
Unknown, as a child Application without a status is, so a sync wave waits for the set to be
generated instead of passing it (docs/compatibility.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.health.fields import get
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    conditions = get(obj, "status", "conditions")
    current = (
        [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []
    )
    if not current:
        return HealthResult(HealthStatus.PROGRESSING, "waiting for the ApplicationSet controller")
    true = {
        str(c.get("type")): str(c.get("message") or "")
        for c in current
        if c.get("status") == "True"
    }
    if "ErrorOccurred" in true:
        return HealthResult(HealthStatus.DEGRADED, true["ErrorOccurred"])
    if "RolloutProgressing" in true:
        return HealthResult(HealthStatus.PROGRESSING, true["RolloutProgressing"])
    if "ResourcesUpToDate" in true:
        return HealthResult(HealthStatus.HEALTHY, true["ResourcesUpToDate"])
    return HealthResult(HealthStatus.UNKNOWN, "Waiting for health status to be determined")
