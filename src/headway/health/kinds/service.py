"""core/Service health: a LoadBalancer is Progressing until it has an ingress address."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get, get_str
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    if get_str(obj, "spec", "type") != "LoadBalancer":
        return HealthResult(HealthStatus.HEALTHY)
    ingress = get(obj, "status", "loadBalancer", "ingress")
    if isinstance(ingress, list) and ingress:
        return HealthResult(HealthStatus.HEALTHY)
    return HealthResult(HealthStatus.PROGRESSING)
