"""autoscaling/HorizontalPodAutoscaler health, from its conditions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from headway.health.fields import annotations_of, conditions, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]

# (condition type, reason) pairs that mean the autoscaler cannot do its job.
_DEGRADED = frozenset(
    {
        ("AbleToScale", "FailedGetScale"),
        ("AbleToScale", "FailedUpdateScale"),
        ("ScalingActive", "FailedGetResourceMetric"),
        ("ScalingActive", "InvalidSelector"),
    }
)
_HEALTHY_WHEN_TRUE = frozenset({"AbleToScale", "ScalingLimited"})
_WAITING = HealthResult(HealthStatus.PROGRESSING, "Waiting to Autoscale")
_V1_CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"


def assess(obj: Any) -> HealthResult:
    """The first condition that is either a known failure (Degraded, with its message) or a
    true AbleToScale/ScalingLimited (Healthy) decides, in the order the controller wrote them;
    with neither, the autoscaler is still waiting. autoscaling/v1 keeps its conditions as JSON
    in an annotation."""
    try:
        found = _v1_conditions(obj) if _is_v1(obj) else conditions(obj)
    except ValueError as err:
        return HealthResult(HealthStatus.UNKNOWN, f"invalid {_V1_CONDITIONS} annotation: {err}")
    for condition in found:
        key = (get_str(condition, "type"), get_str(condition, "reason"))
        if key in _DEGRADED:
            return HealthResult(HealthStatus.DEGRADED, get_str(condition, "message"))
        if key[0] in _HEALTHY_WHEN_TRUE and condition.get("status") == "True":
            return HealthResult(HealthStatus.HEALTHY, get_str(condition, "message"))
    return _WAITING


def _is_v1(obj: Any) -> bool:
    return get_str(obj, "apiVersion") == "autoscaling/v1"


def _v1_conditions(obj: Any) -> list[Mapping[str, Any]]:
    raw = annotations_of(obj).get(_V1_CONDITIONS)
    if raw is None:
        return []
    parsed = json.loads(raw)  # a ValueError is reported by assess()
    return [c for c in parsed if isinstance(c, Mapping)] if isinstance(parsed, list) else []
