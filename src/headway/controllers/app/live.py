"""The live side of an Application: the objects it manages in its destination cluster.

Managed means carrying the app's tracking annotation, or (for objects without one, as
Argo CD's label tracking has it) its `app.kubernetes.io/instance` label and no owner - a Pod
made from a labelled template belongs to its ReplicaSet, not to the app. Objects that exist
under a desired key are read too, so adopting an existing object shows as a diff.

A read comes back as `LiveObjects`, carrying its identity (each object's key, uid and
resourceVersion: what the comparison cache keys a comparison by), worked out once per read and
handed on with every answer the reader reuses: an app none of whose objects moved costs the
comparison cache one lookup, not a walk of its objects (about 10 us per app per refresh at 20
objects, a quarter of a warm refresh).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.errors import ClusterError, Invalid, NotFound, UnknownKind
from headway.cluster.protocol import Cluster, ResourceKind
from headway.controllers.app.live_watched import WatchedObjects
from headway.model.obj import Obj
from headway.sync.comparison import TRACKING_ANNOTATION, TRACKING_LABEL, owner_of
from headway.sync.resources import ResourceKey, key_of

__all__ = [
    "LiveIdentity",
    "LiveObjects",
    "LiveReader",
    "LiveStateUnknown",
    "existing_namespaces",
    "live_identity",
    "orphans",
]


class LiveStateUnknown(ClusterError):
    """The cluster would not say what is live (a 403 on a list, a 429 that persisted): the
    app's live state is unknown, which must never read as "missing" (a sync would create
    what exists, a prune would miss what it should delete)."""

# Kinds an app never manages directly; listing them on every refresh would only cost time.
_SKIPPED_KINDS = frozenset({"Event", "Endpoints", "Lease"})

LiveIdentity = frozenset[tuple[str, ...]]


def live_identity(live: Mapping[ResourceKey, Mapping[str, Any]]) -> LiveIdentity:
    """Each live object's key, uid and resourceVersion, in no order (a set: sorting by
    `ResourceKey` cost most of a refresh where nothing changed). Tuples of strings only, which
    the garbage collector stops tracking: one per live object is kept with each comparison."""
    out = []
    for key, obj in live.items():
        meta = obj.get("metadata") or {}
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        out.append(
            (key.group, key.kind, key.namespace, key.name, str(uid or ""), str(version or ""))
        )
    return frozenset(out)


class LiveObjects(dict[ResourceKey, Obj]):
    """An app's live objects as one read found them, and that read's `identity`
    (`live_identity` of them): given when the read is handed out again, so that it is worked
    out once per read. A copy: changing it changes no other answer, but makes `identity`
    stale, so nothing that reads `identity` changes it."""

    __slots__ = ("identity",)

    def __init__(
        self, objects: Mapping[ResourceKey, Obj], identity: LiveIdentity | None = None
    ) -> None:
        super().__init__(objects)
        self.identity = live_identity(objects) if identity is None else identity


class LiveReader:
    """Reads apps' objects from one cluster; discovery is cached per reader."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._cluster = cluster
        self._kinds: list[ResourceKind] | None = None
        self._scoped: frozenset[tuple[str, str]] | None = None
        self._served_kinds: frozenset[tuple[str, str]] | None = None
        self._answers: dict[str, tuple[str, tuple[ResourceKey, ...], LiveObjects]] = {}
        # Over the Kubernetes API (a client with watch streams), objects are kept from
        # watches instead of listed per app and kind (app_live_watched.py).
        streamed = getattr(cluster, "streams", None) is not None
        self._watched = WatchedObjects(cluster, self.kinds) if streamed else None

    def kinds(self) -> list[ResourceKind]:
        if self._kinds is None:
            self._kinds = [k for k in self._cluster.discovery() if k.kind not in _SKIPPED_KINDS]
        return self._kinds

    def forget_discovery(self) -> None:
        self._kinds = None
        self._scoped = None
        self._served_kinds = None

    def _served(self) -> frozenset[tuple[str, str]]:
        """(group, kind) of every kind a live read covers."""
        if self._served_kinds is None:
            self._served_kinds = frozenset((k.group, k.kind) for k in self.kinds())
        return self._served_kinds

    def cluster_scoped(self) -> frozenset[tuple[str, str]]:
        """(group, kind) of every cluster-scoped kind the cluster serves."""
        if self._scoped is None:
            self._scoped = frozenset((k.group, k.kind) for k in self.kinds() if not k.namespaced)
        return self._scoped

    def managed(self, app: str, desired: Sequence[Mapping[str, Any]]) -> LiveObjects:
        """The app's live objects, reused while nothing they could include has changed.

        On the local store the answer stands while no object labelled with the app moved
        (one indexed query), provided every desired object carried that label; otherwise
        while the store's global revision stands. Other apps' writes (one commit's status
        updates across a fleet) then leave every other answer in place, and an idle fleet
        costs one query per refresh instead of one list per kind."""
        wanted = tuple(sorted(key_of(o) for o in desired))
        cached = self._answers.get(app)
        if cached is not None and cached[1] == wanted:
            by_label = cached[0].startswith("labels:")
            token = self._label_token(app) if by_label else self._store_token()
            if token is not None and token == cached[0]:
                return LiveObjects(cached[2], cached[2].identity)
        # Read both before listing: a write after them only makes the answer stale.
        label_token, store_token = self._label_token(app), self._store_token()
        found = LiveObjects(self._read(app, desired))
        labelled = all(_labelled(found.get(key), app) for key in wanted)
        token = label_token if label_token is not None and labelled else store_token
        if token is not None:
            self._answers[app] = (token, wanted, found)
        return LiveObjects(found, found.identity)

    def _store_token(self) -> str | None:
        revision = getattr(self._cluster, "revision", None)
        if not callable(revision):
            return None
        try:
            return f"store:{revision()}"
        except ClusterError:
            return None

    def _label_token(self, app: str) -> str | None:
        label_revision = getattr(self._cluster, "label_revision", None)
        if not callable(label_revision):
            return None
        try:
            return f"labels:{label_revision(TRACKING_LABEL, app)}"
        except ClusterError:
            return None

    def _read(self, app: str, desired: Sequence[Mapping[str, Any]]) -> dict[ResourceKey, Obj]:
        found: dict[ResourceKey, Obj] = {}
        for obj in self._labelled(app):
            if _managed_by(obj, app):
                found[key_of(obj)] = obj
        for wanted in desired:
            key = key_of(wanted)
            listed = found.get(key)
            # Lists come in each kind's preferred version; like Argo CD, compare live state
            # in the version the manifest is written in, so a served older version (Istio
            # v1beta1 next to v1) is not drift by itself.
            if listed is None or listed.get("apiVersion") != wanted.get("apiVersion"):
                current = self._get(wanted, key)
                if current is not None:
                    found[key] = current
        return found

    def _labelled(self, app: str) -> list[Obj]:
        """Objects whose tracking label names `app`: from the watched objects, or one list
        per kind. A refused read raises `LiveStateUnknown`, never reads as "none"."""
        if self._watched is not None:
            try:
                return self._watched.labelled(app)
            except ClusterError as err:
                raise LiveStateUnknown(str(err)) from None
        labelled = getattr(self._cluster, "labelled", None)
        if callable(labelled):  # the local store: every kind in one indexed query
            try:
                listed: list[Obj] = labelled(TRACKING_LABEL, app)
            except ClusterError as err:
                raise LiveStateUnknown(f"cannot list the objects of {app}: {err}") from None
            served = self._served()
            return [o for o in listed if _group_kind(o) in served]
        found: list[Obj] = []
        for kind in self.kinds():
            try:
                found += self._cluster.list(
                    kind.api_version, kind.kind, label_selector={TRACKING_LABEL: app}
                )
            except NotFound:  # the kind is not served any more (a CRD went away)
                self.forget_discovery()
            except ClusterError as err:
                raise LiveStateUnknown(f"cannot list {kind.kind} ({kind.api_version}): {err}") \
                    from None
        return found

    def _get(self, obj: Mapping[str, Any], key: ResourceKey) -> Obj | None:
        try:
            return self._cluster.get(
                str(obj.get("apiVersion", "")), key.kind, key.name, key.namespace or None
            )
        except NotFound:
            return None
        except (UnknownKind, Invalid):
            self.forget_discovery()  # a CRD may have appeared or gone
            return None
        except ClusterError as err:
            raise LiveStateUnknown(f"cannot read {key}: {err}") from None


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind") or "")


def _labelled(obj: Mapping[str, Any] | None, app: str) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return bool(labels.get(TRACKING_LABEL) == app)


def _managed_by(obj: Mapping[str, Any], app: str) -> bool:
    meta = obj.get("metadata") or {}
    if TRACKING_ANNOTATION in (meta.get("annotations") or {}):
        return owner_of(obj) == app
    return not meta.get("ownerReferences")


def existing_namespaces(cluster: Cluster) -> frozenset[str]:
    try:
        return frozenset(str(ns["metadata"]["name"]) for ns in cluster.list("v1", "Namespace")) | {
            "default",
            "kube-system",
        }
    except ClusterError:
        return frozenset({"default", "kube-system"})


# Argo CD never counts these as orphans: every namespace has them.
_ALWAYS_THERE = frozenset(
    {("", "ConfigMap", "kube-root-ca.crt"), ("", "ServiceAccount", "default")}
)


def orphans(
    reader: LiveReader, namespace: str, ignore: Sequence[Mapping[str, Any]] = ()
) -> list[ResourceKey]:
    """Top-level objects in `namespace` that no Application tracks (Argo CD's orphaned
    resources), minus the project's `orphanedResources.ignore` entries (globs)."""
    found = []
    for kind in reader.kinds():
        if not kind.namespaced:
            continue
        try:
            objects = reader.cluster.list(kind.api_version, kind.kind, namespace=namespace)
        except ClusterError:
            continue
        for obj in objects:
            meta = obj.get("metadata") or {}
            key = key_of(obj)
            if meta.get("ownerReferences") or owner_of(obj) is not None:
                continue
            if (key.group, key.kind, key.name) in _ALWAYS_THERE or _ignored(key, ignore):
                continue
            found.append(key)
    return sorted(found)


def _ignored(key: ResourceKey, ignore: Sequence[Mapping[str, Any]]) -> bool:
    for entry in ignore:
        group = str(entry.get("group") or "")
        kind, name = str(entry.get("kind") or "*"), str(entry.get("name") or "*")
        if (
            fnmatch.fnmatchcase(key.group, group or "")
            and fnmatch.fnmatchcase(key.kind, kind)
            and fnmatch.fnmatchcase(key.name, name)
        ):
            return True
    return False
