"""The Application controller inside the controller manager (`headway serve`).

Two step controllers:

* `ApplicationSteps` - one key per Application. It watches Applications, AppProjects and
  the kinds apps usually manage; a change to a managed object queues the app that tracks
  it, so a wave waiting on a Deployment moves as soon as the Deployment is ready and a
  manual edit is seen at once (self-heal).
* `SourceWatchSteps` - one synthetic key, every half second: re-publishes `--apps PATH`
  when a file there changed, and when a local repository's refs moved (a commit to a
  `file://` remote) refreshes every app reading it, well within a second: it reconciles the
  apps reading a changed file, found through an index of what each app reads
  (`FleetReads`), and queues the rest (which only record the new revision) for the
  Application loop. It keeps the Applications from watch events: one get per changed app,
  a list only at start or after a burst of changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.app.commit_files import CommitFiles
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.definitions import DefinitionsWatcher
from headway.controllers.app.fleet_reads import FleetReads, app_key, in_store_order
from headway.controllers.app.sources import LocalRefWatcher, SourceReader
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj
from headway.source.spec import raw_sources
from headway.sync.comparison import instance_of, owner_of

__all__ = ["MANAGED_KINDS", "ApplicationSteps", "SourceWatchSteps"]

log = logging.getLogger(__name__)

# Watched so a wave or a drift is seen at once; Pods are left out (they change all the time,
# and a hook Pod's wave is looked at again on the executor's own 2-second requeue).
MANAGED_KINDS: tuple[tuple[str, str], ...] = (
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    (APP_API_VERSION, "Rollout"),
)


def _key(obj: Obj) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


class ApplicationSteps:
    name = "applications"

    def __init__(
        self, controller: ApplicationController, store: Cluster, *, apps_namespace: str
    ) -> None:
        self._controller = controller
        self._store = store
        self._apps_namespace = apps_namespace
        self.watches: Sequence[tuple[str, str]] = (
            (APP_API_VERSION, "Application"),
            (APP_API_VERSION, "AppProject"),
            *MANAGED_KINDS,
        )

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        kind = obj.get("kind")
        if kind == "Application" and obj.get("apiVersion") == APP_API_VERSION:
            return [] if self._controller.is_own_status_write(obj) else [_key(obj)]
        if kind == "AppProject" and obj.get("apiVersion") == APP_API_VERSION:
            return [_key(a) for a in _apps(self._store)]
        owner = owner_of(obj)
        if not owner:
            return []
        namespace, name = instance_of(owner, control_namespace=self._apps_namespace)
        return [ObjectKey(namespace, name)]

    def step(self, key: ObjectKey) -> float | None:
        return self._controller.reconcile(key.name, key.namespace)

    def needs_resync(self, key: ObjectKey) -> bool:
        """Whether the manager's periodic resync should look at `key`. A settled app whose
        every resource is of a watched kind is not looked at: any change to it arrives as a
        watch event, and its step already asked for a look at the poll interval (Argo CD's
        timeout.reconciliation). At a 30 s resync an idle fleet was reconciled six times per
        poll interval for nothing."""
        kinds = self._controller.settled_kinds(key.namespace, key.name)
        return kinds is None or not kinds <= set(self.watches)


class SourceWatchSteps:
    name = "application-sources"
    watches: Sequence[tuple[str, str]] = ()
    KEY = ObjectKey("", "sources")
    INTERVAL = 0.5
    # More changed Applications than this between two steps (a relist after the watch
    # expired, a bulk apply): list them all once rather than get each.
    RELIST_OVER = 200

    def __init__(
        self,
        controller: ApplicationController,
        reader: SourceReader,
        store: Cluster,
        *,
        apps_path: Path | None = None,
    ) -> None:
        self._controller = controller
        self._reader = reader
        self._store = store
        self._definitions = DefinitionsWatcher(apps_path) if apps_path is not None else None
        self._refs = LocalRefWatcher()
        self._commits = CommitFiles()
        # The Applications and the paths they read, kept current from watch events: listing
        # (and decoding) the whole fleet every half second cost more than all else when
        # idle, and again on every Application edit.
        self._fleet = FleetReads()
        self._listed = False
        self._stale: set[ObjectKey] = set()
        self._queue: Callable[[str, ObjectKey], None] | None = None

    def bind_queue(self, enqueue: Callable[[str, ObjectKey], None]) -> None:
        """Given by the manager at registration: the apps a commit did not touch are queued
        for the Application loop rather than reconciled inside this step, so the step (and
        every watch event and commit behind it) does not wait for the whole repository's
        apps to record the new revision."""
        self._queue = enqueue

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        if obj.get("kind") != "Application":
            self._listed = False
        elif not self._controller.is_own_status_write(obj):
            # A status the controller wrote itself changes no app's sources.
            self._stale.add(app_key(obj))
        return [self.KEY]

    def step(self, key: ObjectKey) -> float:
        if self._definitions is not None:
            problems = self._definitions.sync(self._store)
            for problem in problems or []:
                log.error("--apps %s: %s", self._definitions.path, problem)
        self._refresh_fleet()
        urls = self._fleet.urls()
        moved = set(self._refs.changed(urls))
        for url in urls:
            self._commits.remember(url)
        changed = {url: self._commits.changed(url) for url in sorted(moved)}
        for url in moved:
            self._reader.mark_changed(url)
        for url in urls:
            self._learn_libraries(url, changed.get(url, ()))
        touched = self._touched(changed)
        # The apps whose files changed first; the rest only record the new revision.
        for app in touched:
            self._controller.reconcile(app.name, app.namespace)
        self._after_touched(moved, touched)
        return self.INTERVAL

    def _touched(self, changed: Mapping[str, Sequence[str] | None]) -> list[ObjectKey]:
        """The apps reading a changed file (every app of a repository whose changed files
        could not be told), found through the index: a few lookups per changed file."""
        found: set[ObjectKey] = set()
        for url, files in changed.items():
            found |= set(self._fleet.reading(url)) if files is None else self._fleet.touched(
                url, files)
        return in_store_order(found)

    def _after_touched(self, moved: set[str], touched: list[ObjectKey]) -> None:
        """Queue (or, unbound, reconcile) every other app of the moved repositories."""
        rest = in_store_order({k for url in moved for k in self._fleet.reading(url)} - set(touched))
        for app in rest:
            if self._queue is not None:
                self._queue(ApplicationSteps.name, app)
            else:
                self._controller.reconcile(app.name, app.namespace)
        for url in moved:  # a file under their path changed: their library paths may have
            for app in touched:
                self._fleet.forget_library(app, url)

    def _learn_libraries(self, url: str, files: Sequence[str] | None) -> None:
        """File the library paths of the apps of `url` not known yet: every app once, on
        first sight, then only new or edited ones and those whose path a commit changed."""
        if files is None or self._commits.refs_came_or_went(url):
            self._fleet.forget_libraries(url)
        for app in self._fleet.without_library(url):
            paths = [str(s.get("path") or "") for s in raw_sources(self._fleet.app(app))
                     if _url(s) == url]
            self._fleet.set_library(app, url, self._commits.library(url, paths))

    def _refresh_fleet(self) -> None:
        stale, self._stale = self._stale, set()
        if self._listed and len(stale) <= self.RELIST_OVER:
            try:
                for key in stale:
                    self._refetch(key)
                return
            except ClusterError:
                pass
        try:
            self._fleet.replace_all(self._store.list(APP_API_VERSION, "Application"))
            self._listed = True
        except ClusterError:
            self._listed = False

    def _refetch(self, key: ObjectKey) -> None:
        try:
            app = self._store.get(APP_API_VERSION, "Application", key.name, key.namespace)
        except NotFound:
            self._fleet.remove(key)
            return
        self._fleet.put(app)


def _url(source: Mapping[str, Any]) -> str:
    return str(source.get("repoURL") or "")


def _apps(store: Cluster) -> list[dict[str, Any]]:
    try:
        return store.list(APP_API_VERSION, "Application")
    except ClusterError:
        return []
