"""The health vocabulary: an ordered status and one assessment result."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["HealthResult", "HealthStatus", "worst"]


class HealthStatus(StrEnum):
    """Argo CD's health codes, declared from most to least healthy.

    The declaration order is Argo CD's `healthOrder`: an Application's health is the worst of
    its resources', and Unknown ranks worst of all (an unassessable resource must never make
    an app look better than a Degraded one).
    """

    HEALTHY = "Healthy"
    SUSPENDED = "Suspended"
    PROGRESSING = "Progressing"
    MISSING = "Missing"
    DEGRADED = "Degraded"
    UNKNOWN = "Unknown"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    def is_worse_than(self, other: HealthStatus) -> bool:
        return self.rank > other.rank


_ORDER: tuple[HealthStatus, ...] = tuple(HealthStatus)


def worst(statuses: Iterable[HealthStatus]) -> HealthStatus:
    """The least healthy status; Healthy for an empty collection (nothing is unhealthy)."""
    result = HealthStatus.HEALTHY
    for status in statuses:
        if status.is_worse_than(result):
            result = status
    return result


@dataclass(frozen=True)
class HealthResult:
    status: HealthStatus
    message: str = ""

    def __str__(self) -> str:
        return f"{self.status} ({self.message})" if self.message else str(self.status)
