"""Replica arithmetic for canaries, against cases whose answers Argo Rollouts also gives."""

from __future__ import annotations

import pytest

from headway.kube.fenceposts import Fenceposts, resolve_fenceposts, resolve_int_or_percent
from headway.rollout.canary_replicas import (
    CanaryScale,
    ReplicaSetScale,
    TrafficWeights,
    approximate_weighted_counts,
    basic_canary_replicas,
    replica_weight_percent,
    traffic_routed_canary_replicas,
)

# (replicas, weight, max_surge) -> (canary, stable)
APPROXIMATIONS = [
    (0, 50, 0, 0, 0),
    (1, 0, 0, 0, 1),
    (1, 1, 0, 0, 1),
    (1, 49, 0, 0, 1),
    (1, 50, 0, 1, 0),
    (1, 1, 1, 1, 1),
    (1, 100, 1, 1, 0),
    (2, 1, 0, 1, 1),
    (2, 99, 0, 1, 1),
    (2, 1, 1, 1, 2),
    (2, 99, 1, 2, 1),
    (3, 10, 0, 1, 2),
    (3, 50, 0, 2, 1),
    (3, 10, 1, 1, 3),
    (3, 33, 1, 1, 2),
    (3, 49, 1, 2, 2),
    (10, 14, 0, 1, 9),
    (10, 15, 0, 2, 8),
    (10, 99, 0, 9, 1),
    (10, 1, 1, 1, 10),
    (10, 19, 1, 2, 9),
    (10, 23, 1, 2, 8),
    (10, 24, 1, 3, 8),
    (10, 99, 1, 10, 1),
    (10, 100, 1, 10, 0),
]


@pytest.mark.parametrize(("replicas", "weight", "surge", "canary", "stable"), APPROXIMATIONS)
def test_weight_is_approximated_by_the_closest_pod_split(
    replicas: int, weight: int, surge: int, canary: int, stable: int
) -> None:
    assert approximate_weighted_counts(replicas, weight, 100, surge) == CanaryScale(canary, stable)


def test_setweight_10_with_3_replicas_is_really_a_quarter_of_the_pods() -> None:
    split = approximate_weighted_counts(3, 10, 100, 1)
    assert replica_weight_percent(split.canary, split.stable) == 25.0


# name, replicas, weight, surge, unavailable, (stable spec, avail), (canary spec, avail), expected
STEPS = [
    ("surge int scales canary up", 10, 20, 2, 0, (10, 10), (0, 0), (2, 10)),
    ("surge percent scales canary up", 10, 20, "20%", 0, (10, 10), (0, 0), (2, 10)),
    ("extra stable pods scale down", 10, 20, "20%", 0, (10, 10), (2, 2), (2, 8)),
    ("never past max surge", 10, 30, 2, 0, (10, 10), (0, 0), (2, 10)),
    ("unavailable int scales stable down", 10, 20, 0, 2, (10, 10), (0, 0), (0, 8)),
    ("unavailable percent scales stable down", 10, 20, 0, "20%", (10, 10), (0, 0), (0, 8)),
    ("never past max unavailable", 10, 30, 0, 2, (10, 10), (0, 0), (0, 8)),
    ("surge and unavailable together", 10, 50, 2, 1, (10, 10), (0, 0), (2, 9)),
    ("weight 0 scales canary to zero", 10, 0, 1, 1, (10, 10), (1, 1), (0, 10)),
    ("weight 100 scales stable to zero", 10, 100, 1, 1, (1, 1), (10, 10), (10, 0)),
    ("one replica keeps a canary pod at 20%", 1, 20, 1, 0, (1, 1), (0, 0), (1, 1)),
    ("one replica keeps a canary pod at 90%", 1, 90, 1, 0, (1, 1), (0, 0), (1, 1)),
    ("spec below available is not over-counted", 10, 100, 3, 0, (7, 8), (6, 3), (6, 7)),
]


@pytest.mark.parametrize(
    ("replicas", "weight", "surge", "unavailable", "stable_rs", "canary_rs", "expected"),
    [case[1:] for case in STEPS],
    ids=[case[0] for case in STEPS],
)
def test_one_step_of_progress_without_a_router(
    replicas: int,
    weight: int,
    surge: int | str,
    unavailable: int | str,
    stable_rs: tuple[int, int],
    canary_rs: tuple[int, int],
    expected: tuple[int, int],
) -> None:
    result = basic_canary_replicas(
        spec_replicas=replicas,
        weight=weight,
        fenceposts=resolve_fenceposts(surge, unavailable, replicas),
        new=ReplicaSetScale("canary", *canary_rs),
        stable=ReplicaSetScale("stable", *stable_rs),
    )
    assert result == CanaryScale(*expected)


def test_older_replicasets_drain_before_new_or_stable_scale_down() -> None:
    result = basic_canary_replicas(
        spec_replicas=10,
        weight=20,
        fenceposts=Fenceposts(max_surge=0, max_unavailable=2),
        new=ReplicaSetScale("canary", 0, 0),
        stable=ReplicaSetScale("stable", 8, 8),
        others=[ReplicaSetScale("old", 2, 2)],
    )
    assert result == CanaryScale(0, 8)


def test_without_a_stable_the_new_replicaset_goes_to_full_scale() -> None:
    result = basic_canary_replicas(
        spec_replicas=4,
        weight=10,
        fenceposts=resolve_fenceposts("25%", "25%", 4),
        new=ReplicaSetScale("v1", 0, 0),
        stable=None,
    )
    assert result == CanaryScale(4, 0)


def test_abort_shrinks_the_canary_while_the_stable_grows_back() -> None:
    result = basic_canary_replicas(
        spec_replicas=10,
        weight=0,
        fenceposts=Fenceposts(max_surge=1, max_unavailable=1),
        new=ReplicaSetScale("canary", 5, 5),
        stable=ReplicaSetScale("stable", 5, 5),
    )
    assert result.canary < 5
    assert result.canary + result.stable <= 11


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [(3, 10, True, 3), ("25%", 10, True, 3), ("25%", 10, False, 2), ("25", 3, True, 1)],
)
def test_int_or_percent(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert resolve_int_or_percent(value, total, round_up=round_up) == expected


def test_fenceposts_never_both_zero() -> None:
    assert resolve_fenceposts("10%", "10%", 3) == Fenceposts(max_surge=1, max_unavailable=0)
    assert resolve_fenceposts(0, "10%", 3) == Fenceposts(max_surge=0, max_unavailable=1)


@pytest.mark.parametrize("bad", ["abc", "-5%", -1])
def test_bad_int_or_percent_is_an_error(bad: int | str) -> None:
    with pytest.raises(ValueError, match=r"int or a percentage|negative"):
        resolve_int_or_percent(bad, 10, round_up=True)


def test_traffic_routed_canary_keeps_stable_fully_scaled() -> None:
    assert traffic_routed_canary_replicas(spec_replicas=10, weight=5) == CanaryScale(1, 10)
    assert traffic_routed_canary_replicas(spec_replicas=10, weight=55) == CanaryScale(6, 10)


def test_set_canary_scale_and_min_pods() -> None:
    explicit = traffic_routed_canary_replicas(spec_replicas=10, weight=5, canary_scale_replicas=3)
    assert explicit == CanaryScale(3, 10)
    floor = traffic_routed_canary_replicas(spec_replicas=10, weight=5, min_pods_per_replicaset=2)
    assert floor == CanaryScale(2, 10)


def test_dynamic_stable_scale_follows_the_larger_of_desired_and_current_traffic() -> None:
    moving_up = traffic_routed_canary_replicas(
        spec_replicas=10,
        weight=60,
        dynamic_stable_scale=True,
        current_weights=TrafficWeights(canary=20, stable=80),
    )
    assert moving_up == CanaryScale(6, 8)
    aborting = traffic_routed_canary_replicas(
        spec_replicas=10,
        weight=0,
        dynamic_stable_scale=True,
        aborted=True,
        current_weights=TrafficWeights(canary=60, stable=40),
    )
    assert aborting == CanaryScale(6, 10)
