"""Deliveries waiting to be sent, and when to try a failed one again. Pure.

A failed delivery is tried again after 1 s, doubling up to 5 minutes between tries; after
`MAX_ATTEMPTS` tries it is given up (and counted: `headway_notifications_given_up_total`).
Times are seconds on the clock's wall time, so a persisted outbox keeps its schedule across
a restart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.notify.decide import Notification

__all__ = [
    "BACKOFF_FIRST_SECONDS",
    "BACKOFF_MAX_SECONDS",
    "MAX_ATTEMPTS",
    "Delivery",
    "after_failure",
    "backoff_seconds",
    "due",
    "next_due",
]

BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 300.0
MAX_ATTEMPTS = 10


@dataclass(frozen=True)
class Delivery:
    notification: Notification
    due_at: float  # wall-clock seconds (UTC timestamp)
    attempts: int = 0
    last_error: str = ""

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Delivery:
        return cls(
            notification=Notification(**raw["notification"]),
            due_at=float(raw["due_at"]),
            attempts=int(raw.get("attempts", 0)),
            last_error=str(raw.get("last_error", "")),
        )


def backoff_seconds(attempts: int) -> float:
    """The wait after the `attempts`-th failed try (1-based): 1, 2, 4, ... capped at 300."""
    return min(BACKOFF_FIRST_SECONDS * 2.0 ** max(0, attempts - 1), BACKOFF_MAX_SECONDS)


def after_failure(delivery: Delivery, *, now: float, error: str) -> Delivery | None:
    """The delivery to try again later, or None when it has had all its tries."""
    attempts = delivery.attempts + 1
    if attempts >= MAX_ATTEMPTS:
        return None
    return dataclasses.replace(
        delivery, attempts=attempts, due_at=now + backoff_seconds(attempts), last_error=error
    )


def due(deliveries: Iterable[Delivery], now: float) -> list[Delivery]:
    return [d for d in deliveries if d.due_at <= now]


def next_due(deliveries: Iterable[Delivery]) -> float | None:
    return min((d.due_at for d in deliveries), default=None)
