"""A Deployment's `Progressing` and `Available` conditions, purely computational.

Progressing, decided in this order:
  a new ReplicaSet was just created          -> True  NewReplicaSetCreated
  every replica updated and available        -> True  NewReplicaSetAvailable
  more updated/ready/available or fewer old  -> True  ReplicaSetUpdated (lastUpdateTime = now)
  no progress for progressDeadlineSeconds    -> False ProgressDeadlineExceeded
  otherwise                                  -> unchanged; look again when the deadline falls
Available: True MinimumReplicasAvailable when available >= replicas - maxUnavailable.
`lastTransitionTime` moves only when the status flips.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from headway.cluster.local.workloads.deployment_math import DeploymentCounts
from headway.kubetime import format_time, parse_time

__all__ = ["available_condition", "counts_of", "progressing_condition"]


def counts_of(status: Mapping[str, Any]) -> DeploymentCounts:
    """The counters a Deployment's status recorded last time."""
    return DeploymentCounts(
        replicas=int(status.get("replicas") or 0),
        updated=int(status.get("updatedReplicas") or 0),
        ready=int(status.get("readyReplicas") or 0),
        available=int(status.get("availableReplicas") or 0),
        unavailable=int(status.get("unavailableReplicas") or 0),
    )


def _condition(
    old: Mapping[str, Any] | None,
    *,
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    touch: bool,
) -> dict[str, Any]:
    stamp = format_time(now)
    same = old is not None and old.get("status") == status
    keep_update = same and old is not None and old.get("reason") == reason and not touch
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastUpdateTime": old.get("lastUpdateTime", stamp) if keep_update and old else stamp,
        "lastTransitionTime": old.get("lastTransitionTime", stamp) if same and old else stamp,
    }


def progressing_condition(
    *,
    old: Mapping[str, Any] | None,
    created: bool,
    complete: bool,
    progressed: bool,
    replica_set: str,
    now: datetime,
    deadline_seconds: float,
) -> tuple[dict[str, Any], float | None]:
    """The condition, and seconds until the deadline should be checked again (or None)."""

    def make(status: str, reason: str, message: str, touch: bool) -> dict[str, Any]:
        return _condition(
            old,
            kind="Progressing",
            status=status,
            reason=reason,
            message=message,
            now=now,
            touch=touch,
        )

    if created:
        return make(
            "True", "NewReplicaSetCreated", f'Created new replica set "{replica_set}"', True
        ), None
    if complete:
        message = f'ReplicaSet "{replica_set}" has successfully progressed.'
        return make("True", "NewReplicaSetAvailable", message, False), None
    if progressed or old is None or old.get("reason") == "NewReplicaSetAvailable":
        message = f'ReplicaSet "{replica_set}" is progressing.'
        return make("True", "ReplicaSetUpdated", message, True), deadline_seconds
    since = parse_time(old.get("lastUpdateTime")) or now
    left = deadline_seconds - (now - since).total_seconds()
    if left <= 0 or old.get("reason") == "ProgressDeadlineExceeded":
        message = f'ReplicaSet "{replica_set}" has timed out progressing.'
        return make("False", "ProgressDeadlineExceeded", message, False), None
    return dict(old), left


def available_condition(
    *, old: Mapping[str, Any] | None, ok: bool, now: datetime
) -> dict[str, Any]:
    if ok:
        reason, message = "MinimumReplicasAvailable", "Deployment has minimum availability."
    else:
        reason, message = (
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    return _condition(
        old,
        kind="Available",
        status="True" if ok else "False",
        reason=reason,
        message=message,
        now=now,
        touch=False,
    )
