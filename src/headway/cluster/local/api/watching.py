"""Watch: read the store's event log after a revision, waiting for more up to a timeout.

Watches poll the `events` table. The wait is real I/O time (another process may be the
writer), so it uses short real sleeps measured on `time.monotonic`, not the `Clock`: a test
on a `VirtualClock` still gets its events, and a timeout of 0 returns at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from headway.cluster.errors import Expired, Invalid
from headway.cluster.local.api import database
from headway.cluster.local.api.kinds import ServedKind
from headway.cluster.protocol import WatchEvent, WatchEventType

__all__ = ["watch_events"]

POLL_SECONDS = 0.02
_BATCH = 500


def watch_events(
    db: database.Database,
    served: ServedKind,
    *,
    api_version: str,
    namespace: str | None,
    resource_version: str | None,
    timeout_seconds: float,
) -> Iterator[WatchEvent]:
    """Events of one kind (optionally one namespace) after `resource_version`.

    With no version (or "0"), first every current object as ADDED, then what follows.
    """
    deadline = time.monotonic() + max(0.0, timeout_seconds)
    if resource_version in (None, "", "0"):
        since, initial = _snapshot(db, served, namespace)
        for event in initial:
            yield _presented(event, api_version)
    else:
        since = _parse_version(str(resource_version))
    while True:
        with db.read() as conn:
            compacted = database.counter(conn, "compacted")
            if since < compacted:
                raise Expired(
                    f"resourceVersion {since} is too old (history starts after {compacted}); "
                    "list again and watch from the list's version"
                )
            rows = database.events_after(
                conn, served.group, served.kind, after=since, namespace=namespace, limit=_BATCH
            )
        for revision, kind, body in rows:
            since = revision
            yield _presented(WatchEvent(WatchEventType(kind), database.loads(body),
                                        str(revision)), api_version)
        if rows:
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        time.sleep(min(POLL_SECONDS, remaining))


def _snapshot(
    db: database.Database, served: ServedKind, namespace: str | None
) -> tuple[int, list[WatchEvent]]:
    with db.read() as conn:
        revision = database.counter(conn, "revision")
        bodies = database.select(conn, served.group, served.kind, namespace=namespace,
                                 equalities={})
    events = []
    for body in bodies:
        obj = database.loads(body)
        events.append(WatchEvent(WatchEventType.ADDED, obj, obj["metadata"]["resourceVersion"]))
    return revision, events


def _parse_version(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise Invalid(f"resourceVersion {text!r} is not a revision of this store") from None


def _presented(event: WatchEvent, api_version: str) -> WatchEvent:
    obj = dict(event.object, apiVersion=api_version)
    return WatchEvent(event.type, obj, event.resource_version)
