"""Simulated traffic: each second, Poisson-many requests per revision, each bad (5xx) with
the revision's error ratio and slow as a log-normal latency says; kept as cumulative counters
like the router's. Pure apart from the random generator it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from headway.drill.numeric import np
from headway.drill.scenario import Scenario
from headway.providers.traffic_window import Counters
from headway.routers.dataplane.latency_buckets import DEFAULT_BUCKETS

__all__ = ["LATENCY_SPREAD", "Tape"]

LATENCY_SPREAD = 0.5
"""The sigma of log latency: the p99 is about 3.2 times the median."""


def _bucket_chances(median: float) -> np.ndarray:
    """The chance a request lands in each latency bucket (the last is +Inf)."""
    below = [
        0.5 * (1 + math.erf(math.log(bound / median) / (LATENCY_SPREAD * math.sqrt(2))))
        for bound in DEFAULT_BUCKETS
    ]
    cumulative = np.array([*below, 1.0])
    return np.diff(cumulative, prepend=0.0)


@dataclass
class _Revision:
    errors: float
    chances: np.ndarray
    requests: np.ndarray
    bad: np.ndarray
    buckets: np.ndarray  # cumulative counts per bucket, per second

    @staticmethod
    def empty(horizon: int, errors: float, median: float) -> _Revision:
        chances = _bucket_chances(median)
        return _Revision(
            errors,
            chances,
            np.zeros(horizon + 1),
            np.zeros(horizon + 1),
            np.zeros((horizon + 1, len(chances))),
        )

    def serve(
        self, rng: np.random.Generator, span: tuple[int, int], *, rate: float, latency: bool
    ) -> None:
        start, end = span
        seconds = end - start
        served = rng.poisson(rate, size=seconds) if rate > 0 else np.zeros(seconds, dtype=int)
        failed = rng.binomial(served, self.errors)
        self.requests[start + 1 : end + 1] = self.requests[start] + np.cumsum(served)
        self.bad[start + 1 : end + 1] = self.bad[start] + np.cumsum(failed)
        if latency:  # the costliest draw: only when some metric reads latency
            slots = rng.multinomial(served, self.chances)
            self.buckets[start + 1 : end + 1] = self.buckets[start] + np.cumsum(slots, axis=0)

    def counters(self, second: int, *, latency: bool = True) -> Counters:
        if not latency:
            return Counters(float(self.requests[second]), float(self.bad[second]))
        bounds = (*DEFAULT_BUCKETS, math.inf)
        cumulative = np.cumsum(self.buckets[second])
        return Counters(
            float(self.requests[second]),
            float(self.bad[second]),
            tuple(zip(bounds, (float(c) for c in cumulative), strict=True)),
        )


class Tape:
    """Both revisions' counters, second by second, served at the weights the replay sets."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        rps: float,
        horizon: int,
        rng: np.random.Generator,
        latency: bool = True,
    ) -> None:
        self.scenario = scenario
        self.latency = latency
        self.rps = rps
        self.horizon = horizon
        self.now = 0
        self._rng = rng
        self.canary = _Revision.empty(horizon, scenario.canary_errors, scenario.canary_latency)
        self.stable = _Revision.empty(horizon, scenario.stable_errors, scenario.stable_latency)

    def serve_until(self, second: int, *, canary_weight: float) -> None:
        """Traffic from `now` to `second` with `canary_weight` percent to the canary."""
        end = min(second, self.horizon)
        if end <= self.now:
            return
        share = canary_weight / 100 if self.scenario.canary_traffic else 0.0
        span = (self.now, end)
        self.canary.serve(self._rng, span, rate=self.rps * share, latency=self.latency)
        self.stable.serve(self._rng, span, rate=self.rps * (1 - share), latency=self.latency)
        self.now = end

    def window(self, second: int, seconds: float, *, canary_only: bool) -> Counters:
        """What was served in the `seconds` before `second`: by the canary, or by both."""
        start = max(0, second - math.ceil(seconds))
        revisions = (self.canary,) if canary_only else (self.canary, self.stable)
        total = Counters()
        for revision in revisions:
            delta = revision.counters(second, latency=self.latency).minus(
                revision.counters(start, latency=self.latency)
            )
            total = _plus(total, delta)
        return total


def _plus(a: Counters, b: Counters) -> Counters:
    if not a.buckets:
        return Counters(a.requests + b.requests, a.errors + b.errors, b.buckets)
    buckets = tuple((le, x + y) for (le, x), (_, y) in zip(a.buckets, b.buckets, strict=True))
    return Counters(a.requests + b.requests, a.errors + b.errors, buckets)
