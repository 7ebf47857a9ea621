"""The HPA's replica arithmetic (Kubernetes' podautoscaler semantics), purely computed."""

from __future__ import annotations

import pytest

from headway.cluster.local.workloads.hpa_math import (
    PodSample,
    Recommendation,
    ScaleEvent,
    metric_proposal,
    parse_behavior,
    rate_limited,
    stabilized,
)

DEFAULT = parse_behavior(None)


def pods(*usages: float | None, request: float = 0.1, ready: bool = True) -> list[PodSample]:
    return [PodSample(f"p{i}", u, request, ready) for i, u in enumerate(usages)]


def test_utilization_proposal_is_the_ceiling_of_ratio_times_pods() -> None:
    # 2 pods at 0.09 cores of 0.1 requested = 90% against 50% -> ceil(1.8 * 2) = 4
    replicas, value = metric_proposal(pods(0.09, 0.09), target=50, utilization=True, current=2)
    assert (replicas, round(value)) == (4, 90)


def test_within_tolerance_keeps_the_current_size() -> None:
    replicas, _ = metric_proposal(pods(0.054, 0.054), target=50, utilization=True, current=2)
    assert replicas == 2  # 54% of a 50% target is within 10%


def test_average_value_divides_by_pod_count() -> None:
    replicas, value = metric_proposal(pods(300e6, 100e6), target=100e6, utilization=False,
                                      current=2)
    assert (replicas, value) == (4, 200e6)


def test_a_pod_without_a_sample_counts_as_idle_on_the_way_up() -> None:
    # measured: 100% vs 50% (up); the missing pod as 0 -> 50% over 2 pods: within tolerance
    replicas, _ = metric_proposal(pods(0.1, None), target=50, utilization=True, current=2)
    assert replicas == 2


def test_a_pod_without_a_sample_counts_as_fully_used_on_the_way_down() -> None:
    # measured 10% (down); missing at 100% -> 55% vs 50%: within tolerance, no scale-down
    replicas, _ = metric_proposal(pods(0.01, None), target=50, utilization=True, current=2)
    assert replicas == 2


def test_unready_pods_cpu_counts_as_nothing_when_scaling_up() -> None:
    samples = [*pods(0.2), *pods(0.2, ready=False)]
    # ready pod 200% of 50 -> up; unready as 0 -> 100% over 2 -> ceil(2 * 2) = 4
    replicas, _ = metric_proposal(samples, target=50, utilization=True, current=2)
    assert replicas == 4


def test_no_sample_at_all_is_an_error() -> None:
    with pytest.raises(ValueError, match="did not receive metrics"):
        metric_proposal(pods(None), target=50, utilization=True, current=1)


def test_scale_down_waits_for_the_highest_recommendation_of_the_window() -> None:
    history = [Recommendation(5, at=0.0), Recommendation(3, at=200.0)]
    assert stabilized(1, current=5, history=history, behavior=DEFAULT, now=250.0) == 5
    assert stabilized(1, current=5, history=history, behavior=DEFAULT, now=301.0) == 3
    assert stabilized(1, current=5, history=history, behavior=DEFAULT, now=501.0) == 1


def test_scale_up_window_takes_the_lowest_recommendation() -> None:
    behavior = parse_behavior({"scaleUp": {"stabilizationWindowSeconds": 60}})
    history = [Recommendation(2, at=0.0)]
    assert stabilized(6, current=2, history=history, behavior=behavior, now=30.0) == 2
    assert stabilized(6, current=2, history=history, behavior=behavior, now=61.0) == 6


def test_default_scale_up_allows_four_pods_or_double_per_15_seconds() -> None:
    limited = rate_limited(20, current=1, events=[], behavior=DEFAULT, now=0.0,
                           min_replicas=1, max_replicas=50)
    assert (limited.replicas, limited.reason) == (5, "ScaleUpLimit")  # max(1+4, 1*2)
    limited = rate_limited(20, current=10, events=[], behavior=DEFAULT, now=0.0,
                           min_replicas=1, max_replicas=50)
    assert limited.replicas == 20  # doubling beats +4


def test_policies_count_what_the_period_already_changed() -> None:
    behavior = parse_behavior({"scaleUp": {"policies": [
        {"type": "Pods", "value": 2, "periodSeconds": 60}]}})
    events = [ScaleEvent(2, at=10.0)]  # 2 -> 4 ten seconds in
    limited = rate_limited(9, current=4, events=events, behavior=behavior, now=30.0,
                           min_replicas=1, max_replicas=10)
    assert limited.replicas == 4  # period start 2 + 2 = 4: nothing more until 70s
    limited = rate_limited(9, current=4, events=events, behavior=behavior, now=71.0,
                           min_replicas=1, max_replicas=10)
    assert limited.replicas == 6


def test_select_policy_min_and_disabled() -> None:
    up = {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 15},
                       {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    least = parse_behavior({"scaleUp": {**up, "selectPolicy": "Min"}})
    assert rate_limited(10, current=4, events=[], behavior=least, now=0.0, min_replicas=1,
                        max_replicas=20).replicas == 5
    off = parse_behavior({"scaleDown": {"selectPolicy": "Disabled"}})
    assert rate_limited(1, current=4, events=[], behavior=off, now=0.0, min_replicas=1,
                        max_replicas=20).replicas == 4


def test_scale_down_percent_truncates_and_min_replicas_holds() -> None:
    behavior = parse_behavior({"scaleDown": {"policies": [
        {"type": "Percent", "value": 50, "periodSeconds": 60}]}})
    limited = rate_limited(1, current=5, events=[], behavior=behavior, now=0.0,
                           min_replicas=1, max_replicas=10)
    assert (limited.replicas, limited.reason) == (2, "ScaleDownLimit")  # int(5 * 0.5)
    limited = rate_limited(1, current=5, events=[], behavior=DEFAULT, now=0.0,
                           min_replicas=3, max_replicas=10)
    assert (limited.replicas, limited.reason) == (3, "TooFewReplicas")


def test_max_replicas_holds() -> None:
    limited = rate_limited(40, current=10, events=[], behavior=DEFAULT, now=0.0,
                           min_replicas=1, max_replicas=12)
    assert (limited.replicas, limited.reason) == (12, "TooManyReplicas")
