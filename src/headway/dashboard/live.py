"""Live updates: the store's watch, turned into topics that pages subscribe to.

One thread per watched kind follows `Cluster.watch` from the current resourceVersion (so the
stream starts with what changes, not with every object); each batch of events becomes a set
of topics (`app/NS/NAME`, `apps`, `rollout/NS/NAME`, `rollouts`) handed to the event loop,
which fans it out to every open event stream. A page region names the topics it shows and
fetches itself again when one arrives: nothing in the browser polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from headway.cluster.errors import Gone
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = ["CLOSED", "WATCHED", "Hub", "topics_of"]

log = logging.getLogger(__name__)

ARGO_API = "argoproj.io/v1alpha1"
WATCHED: tuple[tuple[str, str], ...] = (
    (ARGO_API, "Application"),
    (ARGO_API, "Rollout"),
    (ARGO_API, "AnalysisRun"),
    (ARGO_API, "Experiment"),  # its templates' and runs' progress, as its status reports it
    ("apps/v1", "ReplicaSet"),
    ("v1", "Pod"),
    ("headway.dev/v1alpha1", "Promotion"),
)
# How long one watch call waits for events before it is made again: also how long stopping
# may wait for a watch thread.
_WATCH_SECONDS = 1.0
_QUEUE_LIMIT = 100  # a stream this far behind misses batches (its regions lag a change)
CLOSED: frozenset[str] = frozenset({"\0closed"})  # the last batch a stream gets: end now


def _owner_names(obj: Obj, kind: str) -> list[str]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [str(r.get("name")) for r in refs if r.get("kind") == kind]


def topics_of(obj: Obj, change: str = "MODIFIED") -> set[str]:
    """The page topics a change of `obj` (ADDED, MODIFIED, DELETED) concerns. Purely
    computational.

    An Application's change concerns its own page and its row of the list (`app/NS/NAME`); only
    one that comes or goes changes the list itself (`apps`), so 1,000 Applications being
    reconciled refetch one row each, not the whole list each time.

    A Pod's Rollout is two owners away (Pod -> ReplicaSet -> Rollout); a ReplicaSet's name is
    `<rollout>-<hash>`, so its owner's name is the Pod's ReplicaSet name without the hash."""
    meta = obj.get("metadata") or {}
    namespace, name, kind = meta.get("namespace") or "", meta.get("name") or "", obj.get("kind")
    if kind == "Application":
        return {f"app/{namespace}/{name}"} | ({"apps"} if change != "MODIFIED" else set())
    if kind == "Rollout":
        return {"rollouts", f"rollout/{namespace}/{name}"}
    if kind == "Promotion":
        return {"promotions"}
    owners = _owner_names(obj, "Rollout")
    if kind == "Pod":
        owners = [rs.rsplit("-", 1)[0] for rs in _owner_names(obj, "ReplicaSet")]
    return {f"rollout/{namespace}/{owner}" for owner in owners}


@dataclass
class Hub:
    """Fans topic sets out to subscribers; `publish` is called from watch threads."""

    loop: asyncio.AbstractEventLoop
    _subscribers: set[asyncio.Queue[frozenset[str]]] = field(default_factory=set)
    published: int = 0  # batches published so far (for tests and the benchmark)

    def subscribe(self) -> asyncio.Queue[frozenset[str]]:
        queue: asyncio.Queue[frozenset[str]] = asyncio.Queue(maxsize=_QUEUE_LIMIT)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[frozenset[str]]) -> None:
        self._subscribers.discard(queue)

    def publish(self, topics: Iterable[str]) -> None:
        batch = frozenset(topics)
        if batch:
            self.loop.call_soon_threadsafe(self._deliver, batch)

    def close(self) -> None:
        """End every open stream (called on the event loop, before the server stops, so
        shutting down never waits on a stream that would otherwise never end)."""
        for queue in list(self._subscribers):
            if queue.full():  # make room: ending matters more than a missed batch
                queue.get_nowait()
            queue.put_nowait(CLOSED)

    def _deliver(self, batch: frozenset[str]) -> None:
        self.published += 1
        for queue in list(self._subscribers):
            with contextlib.suppress(asyncio.QueueFull):  # a stalled reader misses a batch
                queue.put_nowait(batch)


def _resource_version(cluster: Cluster, api_version: str, kind: str) -> str:
    return cluster.list_page(api_version, kind, limit=1).resource_version


def follow(cluster: Cluster, hub: Hub, api_version: str, kind: str, stop: threading.Event) -> None:
    """Publish the topics of every change to `kind` until `stop` is set (a thread's body)."""
    version: str | None = None
    failures = 0
    while not stop.is_set():
        try:
            if version is None:
                version = _resource_version(cluster, api_version, kind)
            for event in cluster.watch(
                api_version, kind, resource_version=version, timeout_seconds=_WATCH_SECONDS
            ):
                version = event.resource_version
                hub.publish(topics_of(event.object, str(event.type)))
                if stop.is_set():
                    break
            failures = 0
        except Gone:  # history compacted past us: every page may be stale; start from now
            version = None
            hub.publish({"apps", "rollouts"})
        except Exception:  # e.g. the kind is not installed on this cluster (yet)
            failures += 1
            if failures == 1:
                log.exception("dashboard: watching %s failed; trying again every 5s", kind)
            stop.wait(5.0)


def start_watching(cluster: Cluster, hub: Hub, stop: threading.Event) -> list[threading.Thread]:
    threads = [
        threading.Thread(
            target=follow, args=(cluster, hub, api, kind, stop), name=f"dashboard-{kind}",
            daemon=True,
        )
        for api, kind in WATCHED
    ]
    for thread in threads:
        thread.start()
    return threads
