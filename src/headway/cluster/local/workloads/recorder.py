"""Events from the local controllers, best effort: a failed write never stops a controller."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable

from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = ["note", "reconcile_each"]

_log = logging.getLogger("headway.runtime")


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


def reconcile_each(
    cluster: Cluster, clock: Clock, objs: Iterable[Obj], step: Callable[[Obj], float | None]
) -> float | None:
    """Run `step` for every object; the earliest requeue it asked for, or None.

    One malformed object must not stop the controller for every other one: an object that
    vanished meanwhile is skipped; any other error is logged and recorded as a Warning
    Event `ReconcileError` on the object, and the loop goes on."""
    wakes: list[float] = []
    for obj in objs:
        try:
            wake = step(obj)
        except NotFound:
            continue
        except Exception as err:
            meta = obj.get("metadata") or {}
            message = f"{type(err).__name__}: {err}"
            _log.warning(
                "%s %s/%s: %s", obj.get("kind"), meta.get("namespace"), meta.get("name"), message
            )
            note(cluster, clock, obj, "ReconcileError", message, warning=True)
            continue
        if wake is not None:
            wakes.append(wake)
    return min(wakes) if wakes else None
