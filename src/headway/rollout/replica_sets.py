"""A Rollout's ReplicaSets: what the decisions need to know of them, sorted by pure helpers.

Argo Rollouts names a Rollout's ReplicaSet `<rollout>-<hash>`, labels it (and its pod
template, and its selector) with `rollouts-pod-template-hash: <hash>` and numbers it with
the `rollout.argoproj.io/revision` annotation, the highest revision + 1 when it is created.
A ReplicaSet kept around after a promotion or an abort carries a `scale-down-deadline`
annotation (RFC 3339): it is scaled to zero once that time has passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from headway.kubetime import parse_time
from headway.model.owned_replica_set import owned_replica_set

__all__ = [
    "HASH_LABEL",
    "REVISION_ANNOTATION",
    "SCALE_DOWN_DEADLINE_ANNOTATION",
    "ReplicaSetView",
    "SortedReplicaSets",
    "desired_replica_set",
    "next_revision",
    "rollout_owner_reference",
    "sort_replica_sets",
    "view_of",
]

HASH_LABEL = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
SCALE_DOWN_DEADLINE_ANNOTATION = "scale-down-deadline"


@dataclass(frozen=True)
class ReplicaSetView:
    name: str
    pod_hash: str
    revision: int
    replicas: int  # spec.replicas
    status_replicas: int
    ready: int
    available: int
    created: str  # creationTimestamp, for ordering
    scale_down_deadline: datetime | None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def view_of(rs: Mapping[str, Any]) -> ReplicaSetView:
    """The view of one ReplicaSet object (a Kubernetes-shaped dict)."""
    meta = rs.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    status = rs.get("status") or {}
    raw_revision = str(annotations.get(REVISION_ANNOTATION, "0"))
    spec_replicas = (rs.get("spec") or {}).get("replicas", 1)
    return ReplicaSetView(
        name=str(meta.get("name", "")),
        pod_hash=str(labels.get(HASH_LABEL, "")),
        revision=int(raw_revision) if raw_revision.isdigit() else 0,
        replicas=_int(spec_replicas),
        status_replicas=_int(status.get("replicas")),
        ready=_int(status.get("readyReplicas")),
        available=_int(status.get("availableReplicas")),
        created=str(meta.get("creationTimestamp") or ""),
        scale_down_deadline=parse_time(annotations.get(SCALE_DOWN_DEADLINE_ANNOTATION)),
    )


@dataclass(frozen=True)
class SortedReplicaSets:
    """The new ReplicaSet (current template), the stable one, and all others (newest first)."""

    new: ReplicaSetView | None
    stable: ReplicaSetView | None
    others: tuple[ReplicaSetView, ...]

    @property
    def all(self) -> tuple[ReplicaSetView, ...]:
        found = [rs for rs in (self.new, self.stable) if rs is not None]
        unique = {rs.name: rs for rs in (*found, *self.others)}
        return tuple(unique.values())


def sort_replica_sets(
    sets: Iterable[ReplicaSetView], *, current_hash: str, stable_hash: str
) -> SortedReplicaSets:
    """Split by hash; `new` and `stable` are the same view when the rollout is promoted."""
    ordered = sorted(sets, key=lambda rs: (rs.revision, rs.created, rs.name), reverse=True)
    new = next((rs for rs in ordered if rs.pod_hash == current_hash), None)
    stable = next((rs for rs in ordered if stable_hash and rs.pod_hash == stable_hash), None)
    others = tuple(rs for rs in ordered if rs.pod_hash not in (current_hash, stable_hash))
    return SortedReplicaSets(new, stable, others)


def next_revision(sets: Sequence[ReplicaSetView]) -> int:
    return max((rs.revision for rs in sets), default=0) + 1


def desired_replica_set(
    rollout: Mapping[str, Any], *, pod_hash: str, revision: int, replicas: int
) -> dict[str, Any]:
    """The ReplicaSet Argo Rollouts would create for the rollout's current template."""
    return owned_replica_set(
        rollout,
        hash_label=HASH_LABEL,
        pod_hash=pod_hash,
        replicas=replicas,
        annotations={REVISION_ANNOTATION: str(revision)},
        owner_reference=rollout_owner_reference(rollout),
    )


def rollout_owner_reference(rollout: Mapping[str, Any]) -> dict[str, Any]:
    """The controller ownerReference a Rollout puts on what it creates (ReplicaSets, runs)."""
    meta = rollout["metadata"]
    return {
        "apiVersion": rollout.get("apiVersion", "argoproj.io/v1alpha1"),
        "kind": "Rollout",
        "name": meta["name"],
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }
