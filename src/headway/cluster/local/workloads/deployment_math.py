"""Deployment arithmetic, purely computational, as the Kubernetes deployment controller does it.

Notation: `D` desired replicas, `S` resolved maxSurge (a percentage rounds up), `U` resolved
maxUnavailable (a percentage rounds down; when both are 0, U = 1), `T` the sum of
`spec.replicas` over every ReplicaSet of the Deployment, `N` the new ReplicaSet's
`spec.replicas`, `A_new` its available replicas.

Rolling update, one reconcile:
  scale up    N' = N + min(D + S - T, D - N)            (no change when T >= D + S)
  scale down  budget = T - (D - U) - (N - A_new)        (nothing when budget <= 0)
              1. remove unavailable old pods, oldest ReplicaSet first, within budget;
              2. then available old pods, oldest first, at most A_all - (D - U).
Recreate: every old ReplicaSet to 0; once no old pod runs, N' = D.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.kube.fenceposts import Fenceposts, IntOrPercent, resolve_fenceposts

__all__ = [
    "ReplicaSetCounts",
    "deployment_fenceposts",
    "new_replica_set_scale",
    "old_replica_sets_scale_down",
]

def deployment_fenceposts(strategy: Mapping[str, Any], desired: int) -> Fenceposts:
    """maxSurge/maxUnavailable of a RollingUpdate strategy (defaults 25% / 25%)."""
    rolling = strategy.get("rollingUpdate") or {}
    surge: IntOrPercent = rolling.get("maxSurge", "25%")
    unavailable: IntOrPercent = rolling.get("maxUnavailable", "25%")
    return resolve_fenceposts(surge, unavailable, desired)


@dataclass(frozen=True)
class ReplicaSetCounts:
    """What the arithmetic needs of a ReplicaSet; `order` sorts oldest first."""

    name: str
    replicas: int  # spec.replicas
    available: int  # status.availableReplicas
    order: tuple[str, str] = ("", "")  # (creationTimestamp, name)


def new_replica_set_scale(*, desired: int, max_surge: int, total: int, new_replicas: int) -> int:
    """N' = N + min(D + S - T, D - N), never below N and unchanged once T >= D + S.

    A new ReplicaSet already above D (the Deployment was scaled down) goes straight to D."""
    if new_replicas > desired:
        return desired
    max_total = desired + max_surge
    if total >= max_total:
        return new_replicas
    return new_replicas + max(0, min(max_total - total, desired - new_replicas))


def old_replica_sets_scale_down(
    *,
    desired: int,
    max_unavailable: int,
    new: ReplicaSetCounts | None,
    olds: Sequence[ReplicaSetCounts],
) -> dict[str, int]:
    """The new `spec.replicas` of each old ReplicaSet (only those that change).

    budget = T - (D - U) - (N - A_new); first unavailable old pods go (oldest ReplicaSet
    first), then available ones while the available total stays above D - U."""
    olds = sorted(olds, key=lambda rs: rs.order)
    new_replicas = new.replicas if new else 0
    new_available = new.available if new else 0
    total = new_replicas + sum(rs.replicas for rs in olds)
    min_available = desired - max_unavailable
    budget = total - min_available - (new_replicas - new_available)
    if budget <= 0 or not any(rs.replicas for rs in olds):
        return {}
    scaled: dict[str, int] = {}
    for rs in olds:  # 1. unhealthy old pods
        unhealthy = rs.replicas - rs.available
        if budget <= 0:
            break
        if rs.replicas == 0 or unhealthy <= 0:
            continue
        cut = min(budget, unhealthy)
        scaled[rs.name] = rs.replicas - cut
        budget -= cut
    available_all = new_available + sum(
        min(rs.available, scaled.get(rs.name, rs.replicas)) for rs in olds
    )
    allowed = available_all - min_available
    for rs in olds:  # 2. available old pods
        current = scaled.get(rs.name, rs.replicas)
        if allowed <= 0:
            break
        if current == 0:
            continue
        cut = min(current, allowed)
        scaled[rs.name] = current - cut
        allowed -= cut
    return scaled


@dataclass(frozen=True)
class DeploymentCounts:
    """`status` counters of a Deployment."""

    replicas: int
    updated: int
    ready: int
    available: int
    unavailable: int


def deployment_counts(
    *, all_sets: Sequence[Mapping[str, Any]], new: Mapping[str, Any] | None
) -> DeploymentCounts:
    """replicas = sum of status.replicas; updated = the new ReplicaSet's status.replicas;
    ready/available = sums; unavailable = max(0, sum of spec.replicas - available)."""

    def total(sets: Sequence[Mapping[str, Any]], key: str, part: str = "status") -> int:
        return sum(int((rs.get(part) or {}).get(key) or 0) for rs in sets)

    available = total(all_sets, "availableReplicas")
    return DeploymentCounts(
        replicas=total(all_sets, "replicas"),
        updated=total([new], "replicas") if new else 0,
        ready=total(all_sets, "readyReplicas"),
        available=available,
        unavailable=max(0, total(all_sets, "replicas", "spec") - available),
    )


def rollout_complete(counts: DeploymentCounts, desired: int) -> bool:
    """Every replica updated and available, and nothing old left running."""
    return counts.updated == desired and counts.replicas == desired and counts.available == desired


def made_progress(old: DeploymentCounts, new: DeploymentCounts) -> bool:
    """More updated, ready or available replicas, or fewer old ones, than before."""
    return (
        new.updated > old.updated
        or new.replicas - new.updated < old.replicas - old.updated
        or new.ready > old.ready
        or new.available > old.available
    )
