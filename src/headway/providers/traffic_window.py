"""Counter windows for the traffic provider: deltas between scrapes, and a quantile. Pure.

A window ending now starts at a baseline scrape: the oldest scrape kept that is at most
`window` old; if there is none, the newest older one (so a measurement that comes a little
late still compares with the previous one); if the provider has never scraped this series,
zero (everything the router counted since it started counting the revision, which for a new
canary revision is all of its traffic). A counter that went down means the router restarted:
the current value is then the whole delta, as Prometheus' `increase()` treats a reset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

__all__ = ["Counters", "ScrapeHistory", "SeriesKey", "quantile"]


@dataclass(frozen=True)
class Counters:
    requests: float = 0.0
    errors: float = 0.0
    buckets: tuple[tuple[float, float], ...] = ()  # (upper bound, cumulative count)

    def minus(self, earlier: Counters) -> Counters:
        earlier_buckets = dict(earlier.buckets)
        buckets = tuple((le, n - earlier_buckets.get(le, 0.0)) for le, n in self.buckets)
        delta = Counters(self.requests - earlier.requests, self.errors - earlier.errors, buckets)
        went_down = delta.requests < 0 or delta.errors < 0 or any(n < 0 for _, n in buckets)
        return self if went_down else delta


@dataclass(frozen=True)
class SeriesKey:
    """Whose scrapes these are: one metric of one run, reading one selection of series.

    Two metrics of a run reading the same revision keep separate histories, so each sees the
    traffic since its own previous measurement."""

    run_uid: str
    metric: str
    address: str
    service: str
    pod_hash: str


@dataclass
class ScrapeHistory:
    _scrapes: dict[SeriesKey, list[tuple[datetime, Counters]]] = field(default_factory=dict)

    def window(
        self, key: SeriesKey, counters: Counters, *, now: datetime, window: timedelta
    ) -> tuple[Counters, datetime | None]:
        """(the increase over the window, when the baseline was taken or None for zero)."""
        kept = self._scrapes.setdefault(key, [])
        start = now - window
        inside = [s for s in kept if s[0] >= start]
        before = [s for s in kept if s[0] < start]
        baseline = inside[0] if inside else (before[-1] if before else None)
        # Keep what a later window may start from: the newest scrape before it, and after.
        kept[:] = [*before[-1:], *inside, (now, counters)]
        if baseline is None:
            return counters, None
        return counters.minus(baseline[1]), baseline[0]


def quantile(q: float, buckets: tuple[tuple[float, float], ...]) -> float | None:
    """Prometheus' `histogram_quantile` over cumulative (upper bound, count) pairs."""
    ordered = sorted(buckets)
    if not ordered or ordered[-1][0] != float("inf") or ordered[-1][1] <= 0:
        return None
    rank = q * ordered[-1][1]
    lower, below = 0.0, 0.0
    for index, (upper, count) in enumerate(ordered):
        if count >= rank:
            if upper == float("inf"):
                return ordered[index - 1][0] if index > 0 else None
            if count == below:
                return upper
            return lower + (upper - lower) * (rank - below) / (count - below)
        lower, below = upper, count
    return None
