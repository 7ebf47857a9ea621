"""Pure choice of where each request goes: weighted between destinations, then round-robin.

Weighted choice is smooth weighted round-robin (the algorithm nginx uses for upstream
weights). Each pick adds every candidate's weight to its running score, takes the highest
score, and subtracts the total from the winner. Over any window of `sum(weights)` picks each
candidate is chosen exactly `weight` times, and the minority is spread out instead of
bunched: 90/10 gives nine stable requests, then one canary, repeated. So 1,000 requests at
90/10 split exactly 900/100, and a short observation window still sees the canary share.
A random choice would only be right on average, which makes small-traffic canaries noisy.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["EndpointRotation", "SmoothWeightedChooser"]


class SmoothWeightedChooser:
    """Picks indexes 0..n-1 in exact proportion to integer weights, evenly interleaved."""

    def __init__(self, weights: Sequence[int]) -> None:
        if any(w < 0 for w in weights):
            raise ValueError(f"weights must not be negative: {list(weights)}")
        self._weights = tuple(weights)
        self._total = sum(weights)
        self._scores = [0] * len(weights)

    @property
    def weights(self) -> tuple[int, ...]:
        return self._weights

    def pick(self) -> int | None:
        """The next index, or None when every weight is zero."""
        if self._total == 0:
            return None
        best = 0
        for index, weight in enumerate(self._weights):
            self._scores[index] += weight
            if self._scores[index] > self._scores[best]:
                best = index
        self._scores[best] -= self._total
        return best


class EndpointRotation:
    """Round-robin over a destination's ready endpoints, able to skip a failed one."""

    def __init__(self) -> None:
        self._next = 0

    def order(self, count: int) -> list[int]:
        """Endpoint indexes to try for one request: the next in turn first, then the rest."""
        if count == 0:
            return []
        first = self._next % count
        self._next = first + 1
        return [(first + offset) % count for offset in range(count)]
