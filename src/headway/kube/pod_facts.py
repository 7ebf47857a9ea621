"""Facts about Pod objects that controllers share, purely computational.

A pod is *active* while it is not terminal (Succeeded/Failed) and not being deleted; *ready*
when its `Ready` condition is True; *available* when it has been ready for at least
`minReadySeconds`. `scale_down_order` ranks pods the way the ReplicaSet controller picks
victims: not-ready before ready, ready for a shorter time first, more restarts first,
newer first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from headway.kubetime import format_time, parse_time

__all__ = [
    "is_active",
    "is_available",
    "is_ready",
    "owned_by",
    "ready_since",
    "restart_total",
    "scale_down_order",
    "seconds_until_available",
    "set_condition",
]


def _condition(pod: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_active(pod: Mapping[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    return phase not in ("Succeeded", "Failed") and not deleting


def is_ready(pod: Mapping[str, Any]) -> bool:
    cond = _condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True" and is_active(pod)


def ready_since(pod: Mapping[str, Any]) -> datetime | None:
    cond = _condition(pod, "Ready")
    if cond is None or cond.get("status") != "True":
        return None
    return parse_time(cond.get("lastTransitionTime"))


def is_available(pod: Mapping[str, Any], min_ready_seconds: float, now: datetime) -> bool:
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    return since is not None and (now - since).total_seconds() >= min_ready_seconds


def seconds_until_available(
    pods: Sequence[Mapping[str, Any]], min_ready_seconds: float, now: datetime
) -> float | None:
    """How long until the next ready-but-not-yet-available pod becomes available (None when
    none is waiting): a controller counting available pods looks again then."""
    waits = [
        min_ready_seconds - (now - since).total_seconds()
        for pod in pods
        if is_ready(pod)
        and (since := ready_since(pod)) is not None
        and not is_available(pod, min_ready_seconds, now)
    ]
    return max(0.0, min(waits)) if waits else None


def restart_total(pod: Mapping[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses)


def owned_by(obj: Mapping[str, Any], owner_uid: str) -> bool:
    """Whether `obj` has a controller ownerReference to the object with `owner_uid`."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("uid") == owner_uid and ref.get("controller"):
            return True
    return False


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def scale_down_order(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Pods in the order a ReplicaSet deletes them when it scales down."""

    def key(pod: Mapping[str, Any]) -> tuple[int, int, float, int, str]:
        phase = (pod.get("status") or {}).get("phase", "Pending")
        since = ready_since(pod)
        ready_for = -since.timestamp() if since else 0.0  # later ready first
        created = str((pod.get("metadata") or {}).get("creationTimestamp") or "")
        return (
            _PHASE_RANK.get(phase, 0),
            1 if is_ready(pod) else 0,
            ready_for,
            -restart_total(pod),
            _invert(created),
        )

    return sorted(pods, key=key)


def _invert(text: str) -> str:
    """A sort key that orders strings descending (newest timestamp first)."""
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def set_condition(
    conditions: Sequence[Mapping[str, Any]],
    *,
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    with_update_time: bool = False,
) -> list[dict[str, Any]]:
    """The conditions with `kind` set; `lastTransitionTime` moves only when status changes."""
    stamp = format_time(now)
    out = [dict(c) for c in conditions if c.get("type") != kind]
    old = next((c for c in conditions if c.get("type") == kind), None)
    transition = (
        stamp
        if old is None or old.get("status") != status
        else old.get("lastTransitionTime", stamp)
    )
    new: dict[str, Any] = {"type": kind, "status": status, "reason": reason, "message": message}
    if with_update_time:
        same = old is not None and old.get("status") == status and old.get("reason") == reason
        new["lastUpdateTime"] = old.get("lastUpdateTime", stamp) if same and old else stamp
    new["lastTransitionTime"] = transition
    out.append(new)
    return out
