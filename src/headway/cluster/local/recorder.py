"""Events from the local controllers, best effort: a failed write never stops a controller."""

from __future__ import annotations

import contextlib

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.local.events import record_event
from headway.cluster.protocol import Cluster, Obj

__all__ = ["note"]


def note(
    cluster: Cluster,
    clock: Clock,
    involved: Obj,
    reason: str,
    message: str,
    *,
    warning: bool = False,
    component: str = "headway-controller-manager",
) -> None:
    """Record a Kubernetes-style Event about `involved` (`kubectl describe` shows these)."""
    with contextlib.suppress(ClusterError):
        record_event(
            cluster,
            clock,
            involved=involved,
            reason=reason,
            message=message,
            event_type="Warning" if warning else "Normal",
            component=component,
        )
