"""How many pods the canary and the stable ReplicaSet get at a given weight.

Two regimes, both as Argo Rollouts computes them:

* **Without a traffic router** the weight can only be approximated by pod counts. The target
  split is the (canary, total) pair, with total = spec.replicas or spec.replicas + 1 when a
  surge is allowed, whose canary share canary/total is closest to weight/maxWeight. For a
  weight strictly between 0 and maxWeight, neither side may drop to zero pods (with two or
  more pods in play), so `setWeight: 10` with 3 replicas becomes 1 canary pod next to 3
  stable pods: a real canary share of 25%. The move towards that target is bounded by
  maxSurge (never more than spec.replicas + maxSurge pods) and maxUnavailable (never fewer
  than spec.replicas - maxUnavailable available pods); older ReplicaSets drain first.

* **With a traffic router** the router sets the exact weight, and pods only need to carry it:
  canary = ceil(spec.replicas * weight / maxWeight) (or setCanaryScale's explicit count),
  and the stable stays at full scale unless dynamicStableScale shrinks it to the larger of
  its desired and its current traffic share. minPodsPerReplicaSet raises any non-zero count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from headway.kube.fenceposts import Fenceposts

__all__ = [
    "CanaryScale",
    "ReplicaSetScale",
    "TrafficWeights",
    "approximate_weighted_counts",
    "basic_canary_replicas",
    "replica_weight_percent",
    "traffic_routed_canary_replicas",
]


@dataclass(frozen=True)
class ReplicaSetScale:
    """What the arithmetic needs to know of one ReplicaSet."""

    name: str
    replicas: int  # spec.replicas
    available: int  # status.availableReplicas


@dataclass(frozen=True)
class CanaryScale:
    canary: int
    stable: int


@dataclass(frozen=True)
class TrafficWeights:
    """The weights the router currently applies."""

    canary: int
    stable: int


def _weight_delta(weight: int, max_weight: int, canary: int, total: int) -> float:
    return abs(canary * max_weight / total - weight)


def _halfway(weight: int, max_weight: int, total: int) -> bool:
    """True when rounding down and up are equally far from the weight (3 pods at 50%)."""
    return math.modf(total * weight / max_weight)[0] == 0.5


def approximate_weighted_counts(
    spec_replicas: int, weight: int, max_weight: int, max_surge: int
) -> CanaryScale:
    """The replica split closest to `weight`, as described in the module docstring.

    Ties go to the first candidate in this order: round up at spec.replicas, round down at
    spec.replicas, round up with one surge pod, round down with one surge pod; a candidate
    is skipped when it would leave a side empty that must not be empty, or when it rounds
    a half-way value down (half-way values round up).
    """
    if spec_replicas == 0:
        return CanaryScale(0, 0)
    exact = spec_replicas * weight / max_weight
    up, down = math.ceil(exact), math.floor(exact)
    zero_allowed = weight in (0, max_weight) or (spec_replicas == 1 and max_surge == 0)

    candidates: list[tuple[int, int]] = []
    if up < spec_replicas or zero_allowed:
        candidates.append((up, spec_replicas))
    if not _halfway(weight, max_weight, spec_replicas) and (down != 0 or zero_allowed):
        candidates.append((down, spec_replicas))
    if max_surge > 0:
        candidates.append((up, spec_replicas + 1))
        surge_halfway = _halfway(weight, max_weight, spec_replicas + 1)
        if not surge_halfway and (down != 0 or zero_allowed):
            candidates.append((down, spec_replicas + 1))
    if not candidates:
        return CanaryScale(0, spec_replicas)

    best = candidates[0]
    for candidate in candidates[1:]:
        if _weight_delta(weight, max_weight, *candidate) < _weight_delta(weight, max_weight, *best):
            best = candidate
    canary, total = best
    return CanaryScale(canary, total - canary)


def _scale_down_count(rs: ReplicaSetScale | None, *, ignore_availability: bool) -> int:
    """Pods of `rs` that count as available when deciding how far we may scale down."""
    if rs is None:
        return 0
    if rs.replicas < rs.available or ignore_availability:
        return rs.replicas
    return rs.available


def _drain(rs: ReplicaSetScale | None, desired: int, budget: int, current: int) -> int:
    """Scale `rs` down towards `desired`, by at most `budget` pods."""
    if rs is not None and rs.replicas > desired:
        return max(desired, rs.replicas - budget)
    return current


def _fit_within_limits(
    *,
    drain_rs: ReplicaSetScale | None,
    adjust_rs: ReplicaSetScale | None,
    drain_count: int,
    adjust_count: int,
    max_total: int,
    min_available: int,
) -> tuple[int, int]:
    """Trim the adjusted side back under the surge limit without breaking availability.

    `drain_rs` is the side whose availability was ignored while scaling down; the other
    side is trimmed first, then given back as many pods as availability needs, and any
    remaining excess comes off the drained side.
    """
    available = min(drain_rs.available, drain_count) if drain_rs is not None else 0
    if adjust_rs is None:
        return drain_count, adjust_count
    adjust_count -= max(0, adjust_count + drain_count - max_total)
    available += min(adjust_rs.available, adjust_count)
    lost = max(0, adjust_rs.available - adjust_count)
    shortfall = max(0, min_available - available)
    adjust_count += min(lost, shortfall)
    drain_count -= max(0, adjust_count + drain_count - max_total)
    return drain_count, adjust_count


def basic_canary_replicas(
    *,
    spec_replicas: int,
    weight: int,
    fenceposts: Fenceposts,
    new: ReplicaSetScale | None,
    stable: ReplicaSetScale | None,
    others: Sequence[ReplicaSetScale] = (),
    max_weight: int = 100,
) -> CanaryScale:
    """The next replica counts for a canary without a traffic router (one step of progress).

    Scale up first, stable before canary, within spec.replicas + maxSurge pods in total;
    while older ReplicaSets still have pods, stop there (they drain first). Then scale down,
    keeping at least spec.replicas - maxUnavailable pods available: when the canary grows,
    the stable gives way; when it shrinks (an abort), the canary gives way.
    """
    target = approximate_weighted_counts(spec_replicas, weight, max_weight, fenceposts.max_surge)
    desired_new, desired_stable = target.canary, target.stable
    new_count = new.replicas if new is not None else 0
    has_stable = stable is not None and (new is None or stable.name != new.name)
    stable_count = stable.replicas if has_stable and stable is not None else 0
    if not has_stable:
        desired_new, desired_stable = spec_replicas, 0

    max_total = spec_replicas + fenceposts.max_surge
    counted = [*others, *([new] if new else []), *([stable] if has_stable and stable else [])]
    room = max_total - sum(rs.replicas for rs in counted)

    if has_stable and stable is not None and stable.replicas < desired_stable and room > 0:
        stable_count = min(desired_stable, stable.replicas + room)
        room -= stable_count - stable.replicas
    if new is not None and new.replicas < desired_new and room > 0:
        new_count = min(desired_new, new.replicas + room)

    if sum(rs.replicas for rs in others) > 0:
        return CanaryScale(new_count, stable_count)

    min_available = spec_replicas - fenceposts.max_unavailable
    increasing = new is None or desired_new >= new.replicas
    countable = _scale_down_count(new, ignore_availability=not increasing) + _scale_down_count(
        stable if has_stable else None, ignore_availability=increasing
    )
    if countable <= min_available:
        return CanaryScale(new_count, stable_count)
    budget = countable - min_available

    if not increasing:
        new_count = _drain(new, desired_new, budget, new_count)
        new_count, stable_count = _fit_within_limits(
            drain_rs=new,
            adjust_rs=stable if has_stable else None,
            drain_count=new_count,
            adjust_count=stable_count,
            max_total=max_total,
            min_available=min_available,
        )
    elif has_stable:
        stable_count = _drain(stable, desired_stable, budget, stable_count)
        stable_count, new_count = _fit_within_limits(
            drain_rs=stable,
            adjust_rs=new,
            drain_count=stable_count,
            adjust_count=new_count,
            max_total=max_total,
            min_available=min_available,
        )
    return CanaryScale(new_count, stable_count)


def _weight_to_replicas(spec_replicas: int, weight: int, max_weight: int) -> int:
    return math.ceil(weight * spec_replicas / max_weight)


def _at_least(count: int, min_pods: int | None, spec_replicas: int) -> int:
    if count == 0 or min_pods is None:
        return count
    return max(count, min(min_pods, spec_replicas))


def traffic_routed_canary_replicas(
    *,
    spec_replicas: int,
    weight: int,
    max_weight: int = 100,
    canary_scale_replicas: int | None = None,
    dynamic_stable_scale: bool = False,
    min_pods_per_replicaset: int | None = None,
    aborted: bool = False,
    current_weights: TrafficWeights | None = None,
) -> CanaryScale:
    """Replica counts when a router carries the weight (see the module docstring).

    With dynamicStableScale the stable keeps pods for the larger of its desired and its
    current traffic share, so it is never smaller than the traffic it still receives; while
    aborting, the canary likewise keeps pods for the traffic it still receives.
    """
    if canary_scale_replicas is not None:
        canary = canary_scale_replicas
    else:
        canary = _at_least(
            _weight_to_replicas(spec_replicas, weight, max_weight),
            min_pods_per_replicaset,
            spec_replicas,
        )
    if not dynamic_stable_scale:
        return CanaryScale(canary, spec_replicas)
    stable = _weight_to_replicas(spec_replicas, max_weight - weight, max_weight)
    if current_weights is not None:
        stable = max(stable, _weight_to_replicas(spec_replicas, current_weights.stable, max_weight))
        if aborted:
            still = _weight_to_replicas(spec_replicas, current_weights.canary, max_weight)
            canary = max(canary, still)
    return CanaryScale(
        _at_least(canary, min_pods_per_replicaset, spec_replicas),
        _at_least(stable, min_pods_per_replicaset, spec_replicas),
    )


def replica_weight_percent(canary: int, stable: int) -> float:
    """The share of pods, hence of traffic without a router, that the canary really has."""
    total = canary + stable
    return 0.0 if total == 0 else 100.0 * canary / total
