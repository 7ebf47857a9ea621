"""The pure choice of destination and endpoint."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headway.routers.dataplane.embedded.balancing import EndpointRotation, SmoothWeightedChooser


@given(st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=5))
def test_every_window_of_total_weight_picks_each_exactly_its_weight(weights: list[int]) -> None:
    chooser = SmoothWeightedChooser(weights)
    total = sum(weights)
    if total == 0:
        assert chooser.pick() is None
        return
    for _ in range(3):
        window = Counter(chooser.pick() for _ in range(total))
        assert window == Counter({i: w for i, w in enumerate(weights) if w})


def test_the_minority_is_spread_out_not_bunched() -> None:
    chooser = SmoothWeightedChooser([90, 10])
    picks = [chooser.pick() for _ in range(100)]
    canary_positions = [i for i, pick in enumerate(picks) if pick == 1]
    gaps = {b - a for a, b in itertools.pairwise(canary_positions)}
    assert gaps == {10}


def test_negative_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        SmoothWeightedChooser([50, -1])


def test_rotation_starts_at_the_next_endpoint_and_offers_the_others_after() -> None:
    rotation = EndpointRotation()
    assert rotation.order(3) == [0, 1, 2]
    assert rotation.order(3) == [1, 2, 0]
    assert rotation.order(2) == [0, 1]  # wraps when endpoints went away
    assert rotation.order(0) == []
