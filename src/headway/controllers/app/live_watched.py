"""Every object an Application may manage, kept current from watches: the live side of a
cluster reached over the Kubernetes API (Argo CD's cluster cache, in small).

Asking the API for one app's objects costs one list per served kind (47 on the local
runtime's API): about 0.8 s per app reconcile, measured. Instead, each kind carrying the
tracking label is listed once, then kept up to date from `Cluster.watch` with
`timeout_seconds=0` (which the Kubernetes backend answers from one long-lived stream per
kind, without a request); an app's objects are then picked out of memory. A version the
server forgot (`Gone`) lists that kind again. Any other error is raised for the caller to
turn into "live state unknown".
"""

from __future__ import annotations

from collections.abc import Callable

from headway.cluster.errors import ClusterError, Gone, NotFound
from headway.cluster.protocol import Cluster, ResourceKind, WatchEventType
from headway.model.obj import Obj
from headway.sync.comparison import TRACKING_LABEL
from headway.sync.resources import ResourceKey, key_of

__all__ = ["WatchedObjects"]

KindKey = tuple[str, str]  # apiVersion, kind


class WatchedObjects:
    """The labelled objects of every kind `kinds()` names, by tracking label value."""

    def __init__(self, cluster: Cluster, kinds: Callable[[], list[ResourceKind]]) -> None:
        self._cluster = cluster
        self._kinds = kinds
        self._objects: dict[KindKey, dict[ResourceKey, Obj]] = {}
        self._versions: dict[KindKey, str] = {}

    def labelled(self, app: str) -> list[Obj]:
        """Every object whose tracking label names `app`, as of now."""
        self.catch_up()
        return [obj for objects in self._objects.values() for obj in objects.values()
                if ((obj.get("metadata") or {}).get("labels") or {}).get(TRACKING_LABEL) == app]

    def catch_up(self) -> None:
        """Read what changed since the last call, kind by kind; `ClusterError` when the
        cluster would not say (NotFound: the kind is no longer served, and is dropped)."""
        for kind in self._kinds():
            key = (kind.api_version, kind.kind)
            try:
                if key not in self._versions:
                    self._list(key)
                else:
                    self._follow(key)
            except NotFound:
                self._objects.pop(key, None)
                self._versions.pop(key, None)
            except ClusterError as err:
                raise ClusterError(f"cannot list {kind.kind} ({kind.api_version}): {err}") \
                    from None

    def _list(self, key: KindKey) -> None:
        objects: dict[ResourceKey, Obj] = {}
        token: str | None = None
        version = ""
        while True:
            page = self._cluster.list_page(key[0], key[1], label_selector=TRACKING_LABEL,
                                           limit=500, continue_token=token)
            version = version or page.resource_version
            objects.update((key_of(obj), obj) for obj in page.items)
            token = page.continue_token
            if not token:
                break
        self._objects[key], self._versions[key] = objects, version
        follow_from = getattr(self._cluster, "follow_from", None)
        if callable(follow_from) and version:  # the Kubernetes backend: stream from here on
            follow_from(key[0], key[1], version)

    def _follow(self, key: KindKey) -> None:
        try:
            events = list(self._cluster.watch(key[0], key[1],
                                              resource_version=self._versions[key]))
        except Gone:
            self._list(key)
            return
        objects = self._objects[key]
        for event in events:
            labels = (event.object.get("metadata") or {}).get("labels") or {}
            if event.type is WatchEventType.DELETED or TRACKING_LABEL not in labels:
                objects.pop(key_of(event.object), None)
            else:
                objects[key_of(event.object)] = event.object
            self._versions[key] = event.resource_version
