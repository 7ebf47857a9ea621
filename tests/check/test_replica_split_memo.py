"""HW209 works out each (replicas, weight, surge) split once; the remembered answer is the
arithmetic's, asked first or again, for every small case."""

from __future__ import annotations

from headway.check import progressive
from headway.rollout.canary_replicas import approximate_weighted_counts, replica_weight_percent


def test_the_remembered_split_is_the_computed_one() -> None:
    progressive._served_split.cache_clear()
    for _ in range(2):  # the second pass reads what the first remembered
        for replicas in range(0, 25):
            for weight in range(1, 100):
                for surge in range(0, 3):
                    scale = approximate_weighted_counts(replicas, weight, 100, surge)
                    expected = (scale, replica_weight_percent(scale.canary, scale.stable))
                    assert progressive._served_split(replicas, weight, surge) == expected
