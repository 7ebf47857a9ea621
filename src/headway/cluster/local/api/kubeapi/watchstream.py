"""A watch as the API streams it: one JSON event per line, with bookmarks and errors.

The stream starts with the current objects as ADDED when no resourceVersion (or "0") is
given, else with what changed after that version. With `allowWatchBookmarks` a BOOKMARK
names, every `bookmark_seconds`, a version the client can resume from without missing an
event of this kind: the store's revision is read first and every event up to it delivered
before the bookmark is sent. A version older than the store's event history ends the
stream with an ERROR event holding a `410 Expired` Status, as an API server does; the
client lists again. `sendInitialEvents` ends the initial ADDED events with a bookmark
annotated `k8s.io/initial-events-end`.

With label or field selectors, the watch follows which objects the client holds, as
Kubernetes does: an object that stops matching is sent as DELETED, one that starts
matching as ADDED. A watch resumed from a version learns what matched then from the
store's snapshot of that version (`410` when the history can no longer rebuild it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from headway.cluster.errors import ClusterError, Invalid
from headway.cluster.local.api import paging
from headway.cluster.local.api.kubeapi.operations import Request
from headway.cluster.local.api.kubeapi.paths import ListQuery
from headway.cluster.local.api.kubeapi.status import status_body, status_for
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.protocol import WatchEvent
from headway.model.obj import Obj
from headway.model.selectors import to_selector

__all__ = ["WatchSettings", "watch_lines"]

DEFAULT_TIMEOUT_SECONDS = 1800.0


@dataclass(frozen=True)
class WatchSettings:
    bookmark_seconds: float = 30.0
    poll_seconds: float = 0.1  # the pause after a look at the store that found nothing new


def _line(event_type: str, obj: Obj) -> bytes:
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"


Key = tuple[str, str]  # (namespace, name)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return str(meta.get("namespace", "")), str(meta["name"])


class _Watch:
    def __init__(self, cluster: LocalCluster, req: Request, query: ListQuery,
                 render: Callable[[Obj], Obj]) -> None:
        self.cluster, self.req, self.query, self.render = cluster, req, query, render
        self.selector = to_selector(query.label_selector or None)
        self.selective = bool(query.label_selector or query.field_selector.equal
                              or query.field_selector.not_equal)
        self.matched: set[Key] = set()  # with selectors: the objects the client holds

    def seed(self, revision: int) -> None:
        """With selectors, the objects that matched at `revision` (what a client resuming
        from it holds), from the store's snapshot of that revision."""
        if not self.selective:
            return
        kind = self.req.kind
        everything = paging.encode_continue(
            paging.Continuation(revision=revision, namespace="", name=""))
        page = self.cluster.list_page(kind.api_version, kind.kind,
                                      namespace=self.req.path.namespace,
                                      continue_token=everything)
        self.matched = {_key(o) for o in page.items if self.wanted(o)}

    def lines_for(self, event: WatchEvent) -> Iterator[bytes]:
        """The event as this watch's client sees it. With selectors, as on Kubernetes: an
        object that starts matching is ADDED, one that stops matching is DELETED."""
        obj, kind = event.object, event.type.value
        if not self.selective:
            yield _line(kind, self.render(obj))
            return
        key, was, now = _key(obj), _key(obj) in self.matched, self.wanted(obj)
        if kind == "DELETED" or not now:
            if was:
                self.matched.discard(key)
                yield _line("DELETED", self.render(obj))
            return
        self.matched.add(key)
        yield _line(kind if was or kind == "ADDED" else "ADDED", self.render(obj))

    def wanted(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        return self.selector.matches(meta.get("labels")) and \
            self.query.field_selector.matches(obj)

    def bookmark(self, revision: int, *, initial_end: bool = False) -> bytes:
        meta: dict[str, object] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.req.kind.kind, "apiVersion": self.req.kind.api_version,
               "metadata": meta}
        return _line("BOOKMARK", obj)

    def initial(self) -> tuple[int, list[bytes]]:
        kind = self.req.kind
        objs, revision = self.cluster.list_with_revision(
            kind.api_version, kind.kind, namespace=self.req.path.namespace,
            label_selector=self.query.label_selector or None)
        wanted = [o for o in objs if self.wanted(o)]
        self.matched = {_key(o) for o in wanted} if self.selective else set()
        return int(revision), [_line("ADDED", self.render(o)) for o in wanted]

    def events_after(self, since: int, timeout: float) -> Iterator[WatchEvent]:
        kind = self.req.kind
        return self.cluster.watch(kind.api_version, kind.kind,
                                  namespace=self.req.path.namespace,
                                  resource_version=str(since), timeout_seconds=timeout)


def watch_lines(
    cluster: LocalCluster,
    req: Request,
    query: ListQuery,
    *,
    render: Callable[[Obj], Obj],
    stop: threading.Event,
    settings: WatchSettings,
) -> Iterator[bytes | None]:
    """The lines of one watch response, until its timeout, `stop`, or an error event.

    Each step only reads the store, never waits: `None` means "nothing new yet", and the
    caller pauses `settings.poll_seconds` (without holding a thread) before the next step.
    So an open watch costs no thread while it is idle, however many clients watch."""
    watch = _Watch(cluster, req, query, render)
    try:
        yield from _stream(watch, query, stop=stop, settings=settings)
    except ClusterError as error:
        yield _line("ERROR", status_body(status_for(error, req.target), req.target))


def _stream(watch: _Watch, query: ListQuery, *, stop: threading.Event,
            settings: WatchSettings) -> Iterator[bytes | None]:
    timeout = query.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    if query.resource_version in ("", "0") or query.send_initial_events:
        since, lines = watch.initial()
        yield from lines
        if query.send_initial_events:
            yield watch.bookmark(since, initial_end=True)
    else:
        since = int(query.resource_version) if query.resource_version.isdigit() else -1
        if since < 0:
            raise Invalid(f"resourceVersion {query.resource_version!r} is not a revision of "
                          "this store")
        watch.seed(since)
    last_bookmark = time.monotonic()
    while not stop.is_set() and time.monotonic() < deadline:
        idle = True
        for event in watch.events_after(since, 0.0):
            since, idle = int(event.resource_version), False
            yield from watch.lines_for(event)
        if query.bookmarks and time.monotonic() - last_bookmark >= settings.bookmark_seconds:
            revision = int(watch.cluster.revision())
            for event in watch.events_after(since, 0.0):  # all up to `revision`, and after
                since = int(event.resource_version)
                yield from watch.lines_for(event)
            since = max(since, revision)
            yield watch.bookmark(since)
            last_bookmark = time.monotonic()
        if idle:
            yield None
