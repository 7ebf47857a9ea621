"""networking.k8s.io/Ingress (and extensions/Ingress) health."""

from __future__ import annotations

from typing import Any

from headway.health.fields import get
from headway.health.status import HealthResult, HealthStatus

__all__ = ["assess"]


def assess(obj: Any) -> HealthResult:
    """Healthy once the controller has published at least one load-balancer address."""
    ingress = get(obj, "status", "loadBalancer", "ingress")
    if isinstance(ingress, list) and ingress:
        return HealthResult(HealthStatus.HEALTHY)
    return HealthResult(HealthStatus.PROGRESSING)
