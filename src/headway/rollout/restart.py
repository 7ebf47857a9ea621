"""`spec.restartAt`: restart the Rollout's pods one at a time, as Argo's pod restarter does.

While `spec.restartAt` is newer than `status.restartedAt`, and every ReplicaSet has all its
pods available (so a restart never stacks on unavailability), the oldest pod created before
`restartAt` is deleted; its ReplicaSet replaces it. When none is left,
`status.restartedAt = spec.restartAt`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from headway.kubetime import parse_time
from headway.rollout.context import Draft

__all__ = ["PodView", "reconcile_restart"]


@dataclass(frozen=True)
class PodView:
    name: str
    created: datetime | None


def reconcile_restart(d: Draft, pods: tuple[PodView, ...]) -> None:
    restart_at = (d.ctx.obj.get("spec") or {}).get("restartAt")
    when = parse_time(restart_at)
    if when is None or d.status.get("restartedAt") == restart_at or when > d.ctx.now:
        if when is not None and when > d.ctx.now:
            d.wake_in((when - d.ctx.now).total_seconds())
        return
    old = sorted(
        (p for p in pods if p.created is None or p.created < when),
        key=lambda p: (p.created or when, p.name),
    )
    if not old:
        d.status["restartedAt"] = restart_at
        d.event("RolloutRestarted", f"Rollout restarted (restartAt {restart_at})")
        return
    settled = all(rs.available >= rs.replicas == rs.status_replicas for rs in d.ctx.sets.all)
    if settled:
        d.delete_pods.append(old[0].name)
        d.event("RestartingPod", f"Restarting pod {old[0].name}")
    d.wake_in(1.0)
