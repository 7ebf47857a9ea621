"""Watches over the API, with the `Cluster.watch` semantics.

The backend asks for bookmarks itself (`allowWatchBookmarks=true`; lightkube's watch does
not): a BOOKMARK moves the position the watch resumes from without being an event. When
the server ends a stream before the caller's deadline (its own `timeoutSeconds`, a proxy
closing idle connections), the watch opens a new one from the last position it reached.
An `ERROR` event or a `410` answer raises `Expired` (a `Gone`): the caller lists again.

`timeout_seconds=0` means "what has happened since the version, without waiting": the
API has no such request, so the backend reads the cluster's current version first (a
one-item list) and reads the stream until an event or bookmark reaches it, or until no
line comes for `backlog_idle_seconds` (the server sends a backlog at once; a kind nobody
wrote to since sends nothing until its next bookmark).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

from headway.cluster import errors
from headway.cluster.kube import statuses
from headway.cluster.kube.discovery import ServedKind
from headway.cluster.kube.transport import Transport
from headway.cluster.protocol import WatchEvent, WatchEventType
from headway.model.obj import Obj

__all__ = ["StreamLine", "WatchRequest", "decode_line", "watch_events"]


@dataclass(frozen=True)
class StreamLine:
    """One line of a watch stream: an event, or a bookmark (`event` None)."""

    event: WatchEvent | None
    resource_version: str


def decode_line(line: bytes, *, what: str) -> StreamLine:
    """Purely computational: a stream line as an event or a bookmark; an ERROR raises."""
    try:
        parsed = json.loads(line)
        kind, obj = str(parsed["type"]), parsed["object"]
    except (ValueError, KeyError, TypeError) as error:
        raise errors.ClusterError(f"{what}: not a watch event: {line[:200]!r}") from error
    if kind == "ERROR":
        raise statuses.error_for(int(obj.get("code") or 500), obj, what=what)
    version = str((obj.get("metadata") or {}).get("resourceVersion", ""))
    if kind == "BOOKMARK":
        return StreamLine(event=None, resource_version=version)
    event = WatchEvent(type=WatchEventType(kind), object=obj, resource_version=version)
    return StreamLine(event=event, resource_version=version)


def _reached(version: str, target: str | None) -> bool:
    if target is None:
        return False
    try:
        return int(version) >= int(target)
    except ValueError:  # a server whose versions are not numbers: no early end
        return False


@dataclass(frozen=True)
class WatchRequest:
    served: ServedKind
    namespace: str | None
    resource_version: str | None
    timeout_seconds: float
    backlog_idle_seconds: float

    @property
    def what(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"watch {self.served.kind.api_version} {self.served.kind.kind}{where}"


def watch_events(transport: Transport, request: WatchRequest) -> Iterator[WatchEvent]:
    position = request.resource_version
    if position is None:
        listed, position = _initial(transport, request)
        yield from listed
        if request.timeout_seconds <= 0:
            return
    if request.timeout_seconds > 0:
        deadline = time.monotonic() + request.timeout_seconds
        yield from _follow(transport, request, position, until=None, deadline=deadline)
        return
    latest = _current_version(transport, request)
    if not _reached(position, latest):
        yield from _follow(transport, request, position, until=latest or None, deadline=None)


def _initial(transport: Transport, request: WatchRequest) -> tuple[list[WatchEvent], str]:
    """The current objects as ADDED events, each at the list's version (resuming from any
    of them misses nothing), and that version."""
    params: dict[str, str | int | bool] = {"limit": 500}
    path = request.served.collection_path(request.namespace)
    events: list[WatchEvent] = []
    while True:
        page = transport.request("GET", path, params=params, what=request.what)
        meta = page.get("metadata") or {}
        version = str(meta.get("resourceVersion", ""))
        events += [_added(request.served, item, version) for item in page.get("items") or []]
        if not meta.get("continue"):
            return [_at(e, version) for e in events], version
        params["continue"] = str(meta["continue"])


def _added(served: ServedKind, item: Obj, version: str) -> WatchEvent:
    item.setdefault("apiVersion", served.kind.api_version)
    item.setdefault("kind", served.kind.kind)
    return WatchEvent(type=WatchEventType.ADDED, object=item, resource_version=version)


def _at(event: WatchEvent, version: str) -> WatchEvent:
    return WatchEvent(type=event.type, object=event.object, resource_version=version)


def _current_version(transport: Transport, request: WatchRequest) -> str:
    path = request.served.collection_path(request.namespace)
    page = transport.request("GET", path, params={"limit": 1}, what=request.what)
    return str((page.get("metadata") or {}).get("resourceVersion", ""))


def _follow(transport: Transport, request: WatchRequest, position: str, *,
            until: str | None, deadline: float | None) -> Iterator[WatchEvent]:
    """Events after `position` until the deadline (a timed watch) or until the stream
    reaches `until` or falls idle (a backlog read); reopens streams the server ends."""
    path = request.served.collection_path(request.namespace)
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return
        read_timeout = request.backlog_idle_seconds if remaining is None else remaining
        params: dict[str, str | int | bool] = {
            "watch": True, "allowWatchBookmarks": True, "resourceVersion": position,
            "timeoutSeconds": max(1, math.ceil(read_timeout)),
        }
        with transport.stream_lines(path, what=request.what, params=params,
                                    read_timeout=read_timeout) as lines:
            for line in lines:
                decoded = decode_line(line, what=request.what)
                position = decoded.resource_version or position
                if decoded.event is not None:
                    yield decoded.event
                if _reached(position, until):
                    return
        if deadline is None:  # a backlog read: the stream fell idle or ended
            return
