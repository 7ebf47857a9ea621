"""Timing shared by the micro-benchmarks (imported as `_timing`: scripts run from bench/)."""

from __future__ import annotations

import timeit
from collections.abc import Callable

__all__ = ["per_call_us"]


def per_call_us(fn: Callable[[], object], budget_s: float) -> float:
    """Best-of-5 microseconds per call, each round sized to take about `budget_s / 5`.

    The best round, not the mean, is the figure least disturbed by other processes on a
    shared machine; `timeit.Timer.autorange` first finds how many calls make a round.
    """
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    rounds = max(1, int(number * (budget_s / 5) / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=5, number=rounds)) / rounds * 1e6
