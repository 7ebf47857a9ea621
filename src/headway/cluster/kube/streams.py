"""Long-lived watch streams, one per kind and namespace, each on a thread of its own.

Without them, every "what happened since this version" (`watch(timeout_seconds=0)`, what
the controller manager asks each kind ten times a second) opened a stream and read it until
the current version or 0.25 s of silence: a quiet kind cost the whole 0.25 s. A `KindStream`
keeps one stream open instead, resumed from the last event or bookmark it saw (bookmarks
requested), reopened when the server ends it, and started again from a fresh list when the
server says its version is too old (`410`, an `ERROR` event); events stay in a bounded
buffer, and a caller asking from a version the buffer does not cover is told so (None), to
read the server directly (which answers `410` if the server cannot either).

Events written by others arrive as the server streams them (milliseconds; as an informer).
The caller's own writes are awaited: `wait_until(version)` blocks (bounded) until the
stream has passed a version, so a controller sees what it just wrote.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from headway.cluster import errors
from headway.cluster.kube import watching
from headway.cluster.kube.discovery import ServedKind
from headway.cluster.kube.transport import Transport
from headway.cluster.protocol import WatchEvent

__all__ = ["KindStream", "newer"]

log = logging.getLogger(__name__)


def newer(version: str, than: str) -> bool:
    """Whether `version` comes after `than` (Kubernetes versions are opaque, but both the
    local API's and etcd's are increasing integers; others compare as never newer)."""
    try:
        return int(version) > int(than)
    except ValueError:
        return False


class KindStream:
    """One kind's (in one namespace, or all) watch, kept open from `start`."""

    def __init__(self, transport: Transport, served: ServedKind, namespace: str | None,
                 start: str, *, max_events: int = 20_000, open_seconds: int = 300,
                 retry_seconds: float = 1.0) -> None:
        self._transport, self._served, self._namespace = transport, served, namespace
        self._open_seconds, self._retry_seconds = open_seconds, retry_seconds
        self._changed = threading.Condition()
        self._events: deque[WatchEvent] = deque(maxlen=max_events)
        self.start = start  # every event after this version is (or was) in the buffer
        self.position = start
        self.relists = 0
        self.connected = threading.Event()  # the server answered the stream's request
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"watch-{served.kind.kind}")
        self._thread.start()

    @property
    def what(self) -> str:
        where = f" in {self._namespace}" if self._namespace else ""
        return f"watch {self._served.kind.api_version} {self._served.kind.kind}{where}"

    def since(self, version: str) -> list[WatchEvent] | None:
        """The buffered events after `version`; None when the buffer does not reach back
        that far (the stream started later, relisted, or dropped its oldest events)."""
        with self._changed:
            oldest = self._events[0].resource_version if self._events else self.position
            if version != self.start and newer(self.start, version):
                return None
            if len(self._events) == self._events.maxlen and newer(oldest, version):
                return None
            return [e for e in self._events if newer(e.resource_version, version)]

    def wait_until(self, version: str, *, timeout: float) -> bool:
        """Block until the stream has passed `version` (or `timeout` seconds)."""
        return self._wait(lambda: not newer(version, self.position), timeout)

    def wait_for_any_after(self, version: str, *, timeout: float) -> bool:
        """Block until an event or bookmark after `version` arrives (or `timeout`)."""
        return self._wait(lambda: newer(self.position, version), timeout)

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(done, timeout=timeout)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    # -- the stream's thread ------------------------------------------------------------------

    def _run(self) -> None:
        expired = False
        while not self._closed:
            try:
                if expired:
                    self._relist()
                    expired = False
                self._follow()
            except errors.Gone:
                expired = True
            except Exception as err:
                if self._closed:
                    return
                log.warning("%s: %s; reopening in %.0f s", self.what, err, self._retry_seconds)
                time.sleep(self._retry_seconds)

    def _follow(self) -> None:
        params: dict[str, str | int | bool] = {
            "watch": True, "allowWatchBookmarks": True, "resourceVersion": self.position,
            "timeoutSeconds": self._open_seconds,
        }
        path = self._served.collection_path(self._namespace)
        with self._transport.stream_lines(path, what=self.what, params=params,
                                          read_timeout=self._open_seconds + 60) as lines:
            self.connected.set()
            for line in lines:
                if self._closed:
                    return
                self._take(watching.decode_line(line, what=self.what))

    def _take(self, line: watching.StreamLine) -> None:
        with self._changed:
            if line.event is not None:
                self._events.append(line.event)
            if line.resource_version:
                self.position = line.resource_version
            self._changed.notify_all()

    def _relist(self) -> None:
        """The server cannot resume from our position: start again from its current
        version. What happened in between is lost here, so callers from before it are
        sent to the server (which answers them `410`, and they list again)."""
        path = self._served.collection_path(self._namespace)
        page = self._transport.request("GET", path, params={"limit": 1}, what=self.what)
        version = str((page.get("metadata") or {}).get("resourceVersion", ""))
        with self._changed:
            self._events.clear()
            self.start = self.position = version
            self.relists += 1
            self._changed.notify_all()


StreamKey = tuple[str, str, str | None]  # apiVersion, kind, namespace (None: all)


class StreamHub:
    """The streams of one client, started on first use, and the client's own writes, so a
    read after a write waits (at most `own_write_wait` seconds) for that write's event."""

    def __init__(self, transport: Transport, *, own_write_wait: float = 2.0,
                 delete_wait: float = 0.25) -> None:
        self._transport = transport
        self._own_write_wait, self._delete_wait = own_write_wait, delete_wait
        self._lock = threading.Lock()
        self._streams: dict[StreamKey, KindStream] = {}
        self._written: dict[tuple[str, str], str] = {}  # kind -> version of our last write
        self._deleted: dict[tuple[str, str], bool] = {}  # kind -> a delete not yet seen

    def events_since(self, served: ServedKind, namespace: str | None,
                     version: str) -> list[WatchEvent] | None:
        """What happened to the kind after `version`, from its stream; None when the stream
        cannot say (the caller reads the server). The first call starts the stream from
        `version` and answers None: what happened before it opened is the server's to say."""
        kind = (served.kind.api_version, served.kind.kind)
        with self._lock:
            stream = self._streams.get((*kind, namespace))
            if stream is None:
                self._streams[(*kind, namespace)] = KindStream(
                    self._transport, served, namespace, version)
                return None
            written, deleted = self._written.get(kind), self._deleted.pop(kind, False)
        if written is not None:
            stream.wait_until(written, timeout=self._own_write_wait)
        if deleted:  # a delete's answer may carry no version: wait briefly for its event
            stream.wait_for_any_after(stream.position, timeout=self._delete_wait)
        return stream.since(version)

    def follow_from(self, served: ServedKind, namespace: str | None, version: str) -> None:
        """Open the kind's stream from `version`, a list's version the caller already holds
        the state of, so its first question is answered from the stream too."""
        key = (served.kind.api_version, served.kind.kind, namespace)
        with self._lock:
            if key not in self._streams:
                self._streams[key] = KindStream(self._transport, served, namespace, version)

    def wrote(self, served: ServedKind, method: str, answer: object) -> None:
        """Remember a write of ours (its version), to wait for its event on the next read."""
        kind = (served.kind.api_version, served.kind.kind)
        meta = answer.get("metadata") if isinstance(answer, dict) else None
        version = str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""
        with self._lock:
            if method == "DELETE":
                self._deleted[kind] = True
            if version and (kind not in self._written or newer(version, self._written[kind])):
                self._written[kind] = version

    def connected(self) -> int:
        """How many of the streams the server has answered (open now, or opened once)."""
        with self._lock:
            return sum(stream.connected.is_set() for stream in self._streams.values())

    def close(self) -> None:
        with self._lock:
            for stream in self._streams.values():
                stream.close()
            self._streams.clear()
