"""Kubernetes Event objects (`v1/Event`): record what happened to an object, for `describe`.

Works through the `Cluster` protocol only, so any backend can record events. Repeats of
the same reason and message about the same object are folded into one Event whose `count`
grows and whose `lastTimestamp` moves, as the Kubernetes event recorder does. An Event that
must be told once per occurrence of something (an approval request, which fires a
notification) is recorded with `record_event_once`: named by that occurrence, recorded again it
is left as it is, so a step killed after recording it and resumed does not count it twice.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from headway.clock import Clock
from headway.cluster.errors import Conflict, Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = [
    "EventType",
    "event_name",
    "event_order",
    "events_for",
    "record_event",
    "record_event_once",
]

EventType = Literal["Normal", "Warning"]
_MAX_ATTEMPTS = 5
_MAX_PREFIX = 200


def event_name(involved: Obj, reason: str, message: str, event_type: str) -> str:
    """A stable name per (object, type, reason, message), so repeats find the same Event."""
    meta = involved.get("metadata") or {}
    identity = "\x00".join([
        str(involved.get("kind", "")), str(meta.get("uid") or meta.get("name", "")),
        event_type, reason, message,
    ])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return f"{str(meta.get('name', 'object'))[:_MAX_PREFIX]}.{digest}"


def record_event(
    cluster: Cluster,
    clock: Clock,
    *,
    involved: Obj,
    reason: str,
    message: str,
    event_type: EventType = "Normal",
    component: str = "headway",
) -> Obj:
    """Record (or count again) an Event about `involved`; returns the stored Event."""
    if event_type not in ("Normal", "Warning"):
        raise Invalid(f"event type must be Normal or Warning, not {event_type!r}")
    meta = involved.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    name = event_name(involved, reason, message, event_type)
    now = format_time(clock.now())
    for _ in range(_MAX_ATTEMPTS):
        try:
            existing = cluster.get("v1", "Event", name, namespace)
        except NotFound:
            existing = None
        event = _event(involved, namespace=namespace, name=name, reason=reason,
                       message=message, event_type=event_type, component=component)
        event["count"] = 1 + int(existing.get("count", 0)) if existing else 1
        event["firstTimestamp"] = existing.get("firstTimestamp", now) if existing else now
        event["lastTimestamp"] = now
        if existing:
            event["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
        try:
            return cluster.apply(event, field_manager=component, force=True)
        except Conflict:
            continue  # someone counted the same event meanwhile; read it again
    raise Conflict(f"could not record event {namespace}/{name}: too many concurrent writers")


def record_event_once(
    cluster: Cluster,
    clock: Clock,
    *,
    involved: Obj,
    occurrence: str,
    reason: str,
    message: str,
    event_type: EventType = "Normal",
    component: str = "headway",
) -> Obj:
    """Record an Event about `involved` for `occurrence` (what happened, e.g. one approval
    request) unless one is recorded already: then that Event is returned unchanged, its
    `count` still 1, so whoever fires on each count (notifications) fires once."""
    if event_type not in ("Normal", "Warning"):
        raise Invalid(f"event type must be Normal or Warning, not {event_type!r}")
    meta = involved.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    name = event_name(involved, reason, occurrence, event_type)
    try:
        return cluster.get("v1", "Event", name, namespace)
    except NotFound:
        pass
    now = format_time(clock.now())
    event = _event(involved, namespace=namespace, name=name, reason=reason, message=message,
                   event_type=event_type, component=component)
    event.update(count=1, firstTimestamp=now, lastTimestamp=now)
    return cluster.apply(event, field_manager=component, force=True)


def _event(
    involved: Obj,
    *,
    namespace: str,
    name: str,
    reason: str,
    message: str,
    event_type: str,
    component: str,
) -> Obj:
    meta = involved.get("metadata") or {}
    reference = {
        "apiVersion": involved.get("apiVersion", ""),
        "kind": involved.get("kind", ""),
        "name": meta.get("name", ""),
    }
    if meta.get("namespace"):
        reference["namespace"] = meta["namespace"]
    if meta.get("uid"):
        reference["uid"] = meta["uid"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": reference,
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component},
        "reportingComponent": component,
    }


def events_for(cluster: Cluster, involved: Obj) -> list[Obj]:
    """The Events about `involved` (matched by uid when it has one), ordered by when they
    were last seen, then first seen (as `kubectl describe` lists them)."""
    meta = involved.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    found = []
    for event in cluster.list("v1", "Event", namespace=namespace):
        ref = event.get("involvedObject") or {}
        same_uid = bool(meta.get("uid")) and ref.get("uid") == meta.get("uid")
        same_name = ref.get("kind") == involved.get("kind") and ref.get("name") == meta.get("name")
        if same_uid or (not meta.get("uid") and same_name):
            found.append(event)
    return sorted(found, key=event_order)


def event_order(event: Obj) -> tuple[str, int, str]:
    """When an Event was last seen. Timestamps have whole seconds, so Events of one second are
    ordered by the store's write order (`resourceVersion`), not by their hashed names."""
    version = str(event["metadata"].get("resourceVersion") or "")
    return (
        str(event.get("lastTimestamp") or ""),
        int(version) if version.isdigit() else 0,
        str(event["metadata"].get("name") or ""),
    )
