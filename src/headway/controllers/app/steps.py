"""The Application controller inside the controller manager (`headway serve`).

Two step controllers:

* `ApplicationSteps` - one key per Application. It watches Applications, AppProjects and
  the kinds apps usually manage; a change to a managed object queues the app that tracks
  it, so a wave waiting on a Deployment moves as soon as the Deployment is ready and a
  manual edit is seen at once (self-heal).
* `SourceWatchSteps` - one synthetic key, every half second: re-publishes `--apps PATH`
  when a file there changed, and when a local repository's refs moved (a commit to a
  `file://` remote) refreshes every app reading it, well within a second: first the apps
  reading a changed file, then the rest (which only record the new revision). It lists the
  Applications again only after a watch event says one changed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.app.commit_files import CommitFiles
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.definitions import DefinitionsWatcher
from headway.controllers.app.sources import LocalRefWatcher, SourceReader
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj
from headway.review.commit_order import commit_order
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
        # The Applications as last listed; None after a watch event says one changed. Listing
        # (and decoding) the whole fleet every half second cost more than all else when idle.
        self._listed: list[dict[str, Any]] | None = None

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        # A status the controller wrote itself changes no app's sources: keep the list.
        if obj.get("kind") != "Application" or not self._controller.is_own_status_write(obj):
            self._listed = None
        return [self.KEY]

    def step(self, key: ObjectKey) -> float:
        if self._definitions is not None:
            problems = self._definitions.sync(self._store)
            for problem in problems or []:
                log.error("--apps %s: %s", self._definitions.path, problem)
        apps = self._applications()
        urls = sorted({str(s.get("repoURL") or "") for a in apps for s in raw_sources(a)})
        moved = set(self._refs.changed(urls))
        for url in urls:
            self._commits.remember(url)
        changed = {url: self._commits.changed(url) for url in sorted(moved)}
        for url in moved:
            self._reader.mark_changed(url)
        reading = [a for a in apps if any(_url(s) in moved for s in raw_sources(a))]
        libraries = {_name(a): self._library(a, moved) for a in reading}
        # The apps whose files changed first; the rest only record the new revision.
        for app in commit_order(reading, changed, libraries=libraries):
            meta = app["metadata"]
            self._controller.reconcile(str(meta["name"]), str(meta.get("namespace")))
        return self.INTERVAL

    def _library(self, app: dict[str, Any], moved: set[str]) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for source in raw_sources(app):
            if _url(source) in moved:
                paths = [str(source.get("path") or "")]
                found.update(dict.fromkeys(self._commits.library(_url(source), paths)))
        return tuple(found)

    def _applications(self) -> list[dict[str, Any]]:
        if self._listed is None:
            try:
                self._listed = self._store.list(APP_API_VERSION, "Application")
            except ClusterError:
                return []
        return self._listed


def _url(source: Mapping[str, Any]) -> str:
    return str(source.get("repoURL") or "")


def _name(app: dict[str, Any]) -> str:
    return str((app.get("metadata") or {}).get("name") or "")


def _apps(store: Cluster) -> list[dict[str, Any]]:
    try:
        return store.list(APP_API_VERSION, "Application")
    except ClusterError:
        return []
