"""What one reconcile of a Rollout decided: the actions and the status to write once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headway.rollout.pod_metadata import RoleMetadata

__all__ = ["HeaderRoute", "MirrorRoute", "Plan", "TrafficDecision", "WeightDestination"]


@dataclass(frozen=True)
class HeaderRoute:
    """A managed route sending requests that match `match` to the canary; no match removes it."""

    name: str
    match: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class MirrorRoute:
    """A managed route that serves requests matching `match` as the split does and copies
    `percentage` percent of them to the canary (Argo's `setMirrorRoute`); no match removes it.
    `match` holds Argo's `RouteMatch` entries: `method`, `path`, `headers`."""

    name: str
    match: tuple[Mapping[str, Any], ...]
    percentage: int = 100


@dataclass(frozen=True)
class WeightDestination:
    """A share of traffic for a Service beside stable and canary: a weighted experiment
    template's (Argo's `WeightDestination`, passed to routers as `additionalDestinations`)."""

    service_name: str
    pod_template_hash: str
    weight: int


@dataclass(frozen=True)
class TrafficDecision:
    canary_weight: int
    header_routes: tuple[HeaderRoute, ...] = ()
    mirror_routes: tuple[MirrorRoute, ...] = ()
    remove_managed_routes: bool = False
    canary_hash: str = ""  # the new ReplicaSet's pod-template hash (Istio subsets)
    stable_hash: str = ""
    # weighted experiment templates; the stable gets 100 - canary - these
    additional: tuple[WeightDestination, ...] = ()


@dataclass(frozen=True)
class Plan:
    status: dict[str, Any]
    scales: Mapping[str, int] = field(default_factory=dict)  # ReplicaSet name -> replicas
    deadlines: Mapping[str, str | None] = field(default_factory=dict)  # None removes it
    service_selectors: Mapping[str, str] = field(default_factory=dict)  # Service -> pod hash
    traffic: TrafficDecision | None = None
    create_runs: tuple[dict[str, Any], ...] = ()
    supersede_runs: tuple[str, ...] = ()  # no longer current: terminate if still running
    delete_pods: tuple[str, ...] = ()  # restarts (spec.restartAt)
    delete_replica_sets: tuple[str, ...] = ()  # beyond revisionHistoryLimit
    delete_runs: tuple[str, ...] = ()  # beyond the run history limits
    events: tuple[tuple[str, str, str], ...] = ()  # (type, reason, message)
    pod_metadata: Mapping[str, RoleMetadata] = field(default_factory=dict)  # ReplicaSet -> role
    create_experiments: tuple[dict[str, Any], ...] = ()
    terminate_experiments: tuple[str, ...] = ()  # no longer the current step's
    workload_replicas: int | None = None  # the workloadRef Deployment's replicas; None: leave it
    requeue_after: float | None = None
