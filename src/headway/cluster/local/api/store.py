"""`LocalCluster`: the embedded object store with Kubernetes semantics, in one SQLite file.

It implements the `Cluster` protocol (see docs/cluster.md for the semantics and what is
simplified compared to a real API server). Several processes may open the same file at
once; every write is one SQLite transaction, so they never see a half-written change.
"""

from __future__ import annotations

import secrets
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from headway.clock import Clock
from headway.cluster import events
from headway.cluster.errors import (
    AlreadyExists,
    Conflict,
    Invalid,
    NamespaceNotFound,
    NotFound,
)
from headway.cluster.local.api import apply as ssa
from headway.cluster.local.api import (
    crd_status,
    database,
    gc,
    paging,
    preconditions,
    scale,
    schemas,
    snapshots,
    watching,
    writes,
)
from headway.cluster.local.api.jsonvalues import clone, not_json
from headway.cluster.local.api.kinds import (
    BUILTIN_KINDS,
    CRD_GROUP,
    KindTable,
    ServedKind,
    validate_crd,
)
from headway.cluster.local.api.objects import (
    ObjectKey,
    managed_content,
    validate_object,
    with_content,
)
from headway.cluster.local.api.schemas import FieldValidation
from headway.cluster.protocol import ListPage, PropagationPolicy, ResourceKind, WatchEvent
from headway.kubetime import format_time
from headway.model.obj import Obj
from headway.model.schema import describe
from headway.model.selectors import SelectorError, SelectorLike, to_selector

__all__ = ["LocalCluster"]

# Namespaces that exist without a Namespace object, as on a fresh Kubernetes cluster.
IMPLICIT_NAMESPACES = frozenset({"default", "kube-system"})
DEFAULT_MANAGER = "headway"
BUILTIN_TABLE = KindTable(BUILTIN_KINDS)
ObjList = list[Obj]  # named here: inside the class, `list` is the method
_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' generateName alphabet


class LocalCluster:
    """The local backend's store. `LocalCluster(path, clock)` creates or reopens the file."""

    def __init__(self, path: Path, clock: Clock, *, event_history: int = 10_000) -> None:
        self.path = Path(path)
        self.clock = clock
        self._db = database.Database(self.path)
        self._event_history = event_history

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- discovery -------------------------------------------------------------------

    def discovery(self) -> list[ResourceKind]:
        with self._db.read() as conn:
            return self._kinds(conn).all()

    def _kinds(self, conn: sqlite3.Connection) -> KindTable:
        rows = conn.execute(
            "SELECT body FROM objects WHERE grp = ? AND kind = 'CustomResourceDefinition'",
            (CRD_GROUP,),
        ).fetchall()
        return KindTable.with_crds(database.loads(r[0]) for r in rows)

    def _resolve_for_write(self, conn: sqlite3.Connection, obj: Obj) -> ServedKind:
        served = self._resolve(conn, obj["apiVersion"], obj["kind"])
        if (served.group, served.kind) == (CRD_GROUP, "CustomResourceDefinition"):
            validate_crd(obj)
        return served

    def _schema_checked(
        self, conn: sqlite3.Connection, obj: Obj, served: ServedKind, mode: FieldValidation
    ) -> Obj:
        """`obj` as the store may keep it: `Invalid` for a wrong type, or for an unknown
        field under `Strict`; unknown fields dropped under `Warn` and `Ignore`."""
        problems = self._schema_problems(conn, obj, served)
        if not problems:
            return obj
        refused = [p for p in problems if not p.unknown or mode == "Strict"]
        if refused:
            where = f"{obj['kind']} {obj['metadata'].get('name') or '<generated>'}"
            message = "; ".join(str(p) for p in refused)
            raise Invalid(f"{where}: {message}", tuple((p.path, p.message) for p in refused))
        return schemas.without_unknown_fields(obj, problems)

    def _schema_problems(
        self, conn: sqlite3.Connection, obj: Obj, served: ServedKind
    ) -> tuple[schemas.FieldProblem, ...]:
        check = schemas.builtin_check(obj["apiVersion"], obj["kind"])
        if check is None and not BUILTIN_TABLE.knows(obj["apiVersion"], obj["kind"]):
            crd_key = ObjectKey(CRD_GROUP, "CustomResourceDefinition", "",
                                f"{served.plural}.{served.group}")
            crd = database.fetch(conn, crd_key)
            version = obj["apiVersion"].rpartition("/")[2]
            check = schemas.crd_check(crd, version) if crd is not None else None
        return check.problems(obj) if check is not None else ()

    def schema_problems(self, obj: Obj) -> tuple[schemas.FieldProblem, ...]:
        """The wrong types and unknown fields a write of `obj` would meet (for a caller that
        warns about unknown fields before writing under `Warn`)."""
        validate_object(obj)
        with self._db.read() as conn:
            return self._schema_problems(conn, obj, self._resolve(conn, obj["apiVersion"],
                                                                  obj["kind"]))

    def _resolve(self, conn: sqlite3.Connection, api_version: str, kind: str) -> ServedKind:
        if BUILTIN_TABLE.knows(api_version, kind):  # no CRD can change a built-in kind
            return BUILTIN_TABLE.resolve(api_version, kind)
        return self._kinds(conn).resolve(api_version, kind)

    def _key(self, served: ServedKind, name: str, namespace: str | None) -> ObjectKey:
        # Callers hand on what a manifest said; a number there must not reach SQLite.
        if not isinstance(name, str):
            raise Invalid(f"{served.kind}: a name must be a string, got {describe(name)}")
        if namespace is not None and not isinstance(namespace, str):
            message = f"a namespace must be a string, got {describe(namespace)}"
            raise Invalid(f"{served.kind} {name}: {message}")
        if served.namespaced:
            return ObjectKey(served.group, served.kind, namespace or "default", name)
        if namespace:
            raise Invalid(f"{served.kind} is cluster-scoped; it takes no namespace ({namespace!r})")
        return ObjectKey(served.group, served.kind, "", name)

    # ---- reads -----------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        with self._db.single() as conn:  # one statement after resolving: no transaction
            key = self._key(self._resolve(conn, api_version, kind), name, namespace)
            found = database.fetch(conn, key)
        if found is None:
            raise NotFound(f"{key} not found")
        return _presented(found, api_version)

    def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | str | None = None,
    ) -> list[Obj]:
        objs, _ = self.list_with_revision(
            api_version, kind, namespace=namespace, label_selector=label_selector
        )
        return objs

    def list_with_revision(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | str | None = None,
    ) -> tuple[ObjList, str]:
        """`list`, plus the revision it is consistent with: watch from it to miss nothing
        (Kubernetes' list `metadata.resourceVersion`)."""
        selector = _selector(label_selector)
        with self._db.read() as conn:
            served = self._resolve(conn, api_version, kind)
            if namespace and not served.namespaced:
                raise Invalid(f"{kind} is cluster-scoped; it takes no namespace ({namespace!r})")
            bodies = database.select(
                conn, served.group, served.kind, namespace=namespace,
                equalities=selector.equalities(),
            )
            revision = database.counter(conn, "revision")
        objs = (database.loads(body) for body in bodies)
        matching = [
            _presented(o, api_version)
            for o in objs
            if selector.matches(o["metadata"].get("labels"))
        ]
        return matching, str(revision)

    def list_page(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListPage:
        """One page of `list` in Kubernetes' shape: at most `limit` objects (all when None
        or 0), after the place `continue_token` names. Every page shows the objects as they
        were when the first page was read (`snapshots`); a token older than the watch
        history raises `Expired` (list again from the start)."""
        selector = _selector(label_selector)
        start = paging.decode_continue(continue_token) if continue_token else None
        with self._db.read() as conn:
            served = self._resolve(conn, api_version, kind)
            if namespace and not served.namespaced:
                raise Invalid(f"{kind} is cluster-scoped; it takes no namespace ({namespace!r})")
            revision = database.counter(conn, "revision")
            if start is not None:
                paging.check_continuation(start, database.counter(conn, "compacted"))
                revision = start.revision
            equalities = selector.equalities()
            indexed = len(equalities) == len(selector.requirements)  # SQL does all of it
            snapshot = snapshots.objects_at(
                conn, served, revision=revision, namespace=namespace, equalities=equalities,
                after=(start.namespace, start.name) if start else None,
                first=limit + 1 if limit and indexed else None,
            )
        matching = [o for o in snapshot.objects if selector.matches(o["metadata"].get("labels"))]
        return paging.page_of(matching, api_version, revision=revision, limit=limit,
                     total=snapshot.total)

    def revision(self) -> str:
        """The store's current revision (read it before a `list` to watch from it, or use
        `list_with_revision`)."""
        with self._db.read() as conn:
            return str(database.counter(conn, "revision"))

    def label_revision(self, key: str, value: str) -> str:
        """A token that changes whenever an object labelled `key=value` is created, changed,
        relabelled or deleted, and not when anything else is written (one indexed query)."""
        with self._db.read() as conn:
            count, newest = database.label_token(conn, key, value)
        return f"{count}@{newest}"

    def labelled(self, key: str, value: str) -> ObjList:
        """Every object of any kind labelled `key=value`, each in the apiVersion it was
        written in (one query through the labels index, where a list per kind costs one
        query per served kind: 48 per Application's live read)."""
        with self._db.read() as conn:
            return [database.loads(body) for body in database.labelled(conn, key, value)]

    # ---- writes ----------------------------------------------------------------------

    def create(
        self,
        obj: Obj,
        *,
        field_manager: str = DEFAULT_MANAGER,
        dry_run: bool = False,
        field_validation: FieldValidation = "Strict",
    ) -> Obj:
        """Create `obj` (`Conflict` when it exists); `metadata.generateName` is honoured."""
        validate_object(obj, name_required=False)
        with self._db.write() as conn:
            fresh = self._created(conn, obj, field_manager=field_manager,
                                  field_validation=field_validation)
            if dry_run:
                return _presented(fresh, obj["apiVersion"])
            stored = self._commit(conn, fresh, None)
        return _presented(stored, obj["apiVersion"])

    def create_all(self, objs: Iterable[Obj], *, field_manager: str = DEFAULT_MANAGER) -> int:
        """Create every object of `objs` in one transaction: all of them, or (on the first
        refusal, raised as `create` raises it) none. For loading many objects at once (a
        fleet's fixture, an import), where a transaction per object is most of the cost.
        Returns how many were created."""
        created = 0
        with self._db.write() as conn:
            for obj in objs:
                validate_object(obj, name_required=False)
                fresh = self._created(conn, obj, field_manager=field_manager,
                                      field_validation="Strict")
                self._commit(conn, fresh, None)
                created += 1
        return created

    def _created(
        self,
        conn: sqlite3.Connection,
        obj: Obj,
        *,
        field_manager: str,
        field_validation: FieldValidation,
    ) -> Obj:
        """`obj` as a create would store it (identity, content, managed fields)."""
        served = self._resolve_for_write(conn, obj)
        obj = self._schema_checked(conn, obj, served, field_validation)
        fresh = self._new_object(conn, served, obj)
        content = managed_content(obj)
        fields = ssa.update_fields(
            {}, content, (), manager=field_manager, api_version=obj["apiVersion"],
            now=self._now(),
        )
        fresh = with_content(fresh, content)
        fresh["metadata"]["managedFields"] = ssa.encode_managed_fields(fields)
        return fresh

    def update(
        self,
        obj: Obj,
        *,
        field_manager: str = DEFAULT_MANAGER,
        with_status: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation = "Strict",
    ) -> Obj:
        """Replace an object's metadata and spec (its status too only `with_status`).

        A `metadata.resourceVersion` in `obj` is a precondition (`Conflict` when stale);
        the fields this write changes become `field_manager`'s (operation "Update").
        `with_status` replaces the status by `obj["status"]` in the same write, as a
        Kubernetes PUT does on a kind without a status subresource (Argo CD's Application):
        what must change together changes in one write, under one precondition.
        `dry_run` checks everything and returns the result without storing it.
        """
        validate_object(obj)
        with self._db.write() as conn:
            served = self._resolve_for_write(conn, obj)
            obj = self._schema_checked(conn, obj, served, field_validation)
            live = self._live_for_write(conn, served, obj)
            old_content, new_content = managed_content(live), managed_content(obj)
            same_status = not with_status or live.get("status") == obj.get("status")
            if old_content == new_content and same_status:
                return _presented(live, obj["apiVersion"])
            updated = self._with_updated_content(
                live, new_content, field_manager=field_manager, api_version=obj["apiVersion"])
            if with_status:
                updated.pop("status", None)
                if obj.get("status") is not None:
                    updated["status"] = clone(dict(obj["status"]))
            preconditions.check_no_new_finalizers(live, updated, writes.key_of(live))
            if dry_run:
                return _presented(updated, obj["apiVersion"])
            stored = self._commit(conn, updated, live)
        return _presented(stored, obj["apiVersion"])

    def _with_updated_content(
        self, live: Obj, content: dict[str, Any], *, field_manager: str, api_version: str
    ) -> Obj:
        """`live` with its managed part replaced by `content`, the changed fields owned by
        `field_manager` (operation "Update")."""
        fields = ssa.update_fields(
            managed_content(live), content,
            ssa.decode_managed_fields(live["metadata"].get("managedFields")),
            manager=field_manager, api_version=api_version, now=self._now(),
        )
        updated = with_content(live, content)
        updated["metadata"]["managedFields"] = ssa.encode_managed_fields(fields)
        return updated

    def get_scale(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj:
        with self._db.read() as conn:
            _, paths, live = self._scale_target(conn, api_version, kind, name, namespace)
        return scale.scale_of(live, paths)

    def update_scale(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        replicas: int,
        field_manager: str = DEFAULT_MANAGER,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        with self._db.write() as conn:
            key, paths, live = self._scale_target(conn, api_version, kind, name, namespace)
            preconditions.check_version(key, resource_version, live)
            old = managed_content(live)
            content = scale.with_replicas(old, replicas, paths, where=str(key))
            if content == old:
                return scale.scale_of(live, paths)
            updated = self._with_updated_content(
                live, content, field_manager=field_manager, api_version=api_version)
            if dry_run:
                return scale.scale_of(updated, paths)
            stored = self._commit(conn, updated, live)
        return scale.scale_of(stored, paths)

    def _scale_target(
        self,
        conn: sqlite3.Connection,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
    ) -> tuple[ObjectKey, scale.ScalePaths, Obj]:
        """The object behind a scale subresource, with its scale paths (`NotFound` if absent)."""
        served = self._resolve(conn, api_version, kind)
        paths = self._scale_paths(conn, served, api_version)
        key = self._key(served, name, namespace)
        live = database.fetch(conn, key)
        if live is None:
            raise NotFound(f"{key} not found")
        return key, paths, live

    def _scale_paths(
        self, conn: sqlite3.Connection, served: ServedKind, api_version: str
    ) -> scale.ScalePaths:
        """The kind's scale paths: built in, or declared by its CRD (`NotFound` if none)."""
        builtin = scale.builtin_scale_paths(served.group, served.kind)
        if builtin is not None:
            return builtin
        crd_key = ObjectKey(CRD_GROUP, "CustomResourceDefinition", "",
                            f"{served.plural}.{served.group}")
        crd = database.fetch(conn, crd_key)
        if crd is None:
            raise NotFound(f"{served.kind} has no scale subresource")
        return scale.crd_scale_paths(crd, api_version.rpartition("/")[2])

    def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation = "Strict",
    ) -> Obj:
        """Server-side apply. Every write (create, update, apply) is checked against its
        kind's schema first (see `schemas`): `field_validation` decides what an unknown
        field does, as Kubernetes' query parameter of that name does."""
        validate_object(obj)
        applied = managed_content(obj)
        ssa.check_applied_lists(applied)
        with self._db.write() as conn:
            served = self._resolve_for_write(conn, obj)
            checked = self._schema_checked(conn, obj, served, field_validation)
            if checked is not obj:  # unknown fields dropped
                obj, applied = checked, managed_content(checked)
            key = self._key(served, obj["metadata"]["name"], obj["metadata"].get("namespace"))
            live = database.fetch(conn, key)
            if live is None:
                preconditions.check_preconditions(obj, None, key)
                live_for_apply = self._new_object(conn, served, obj)
            else:
                preconditions.check_preconditions(obj, live, key)
                live_for_apply = live
            result = self._applied(live_for_apply, obj["apiVersion"], applied,
                                   field_manager=field_manager, force=force)
            if live is not None and result is not None:
                preconditions.check_no_new_finalizers(live, result, key)
            if result is None or dry_run:
                return _presented(result or live_for_apply, obj["apiVersion"])
            stored = self._commit(conn, result, live)
        return _presented(stored, obj["apiVersion"])

    def _applied(
        self,
        live: Obj,
        api_version: str,
        applied: dict[str, Any],
        *,
        field_manager: str,
        force: bool,
    ) -> Obj | None:
        """The object after the apply, or None when the apply changes nothing."""
        entries = ssa.decode_managed_fields(live["metadata"].get("managedFields"))
        live_content = managed_content(live)
        outcome = ssa.apply_fields(
            live_content, entries, applied, manager=field_manager,
            force=force, api_version=api_version, now=self._now(),
        )
        existing = "resourceVersion" in live["metadata"]
        unchanged = outcome.content == live_content
        if existing and unchanged and _same_ownership(entries, outcome.managed):
            return None
        result = with_content(live, outcome.content)
        result["metadata"]["managedFields"] = ssa.encode_managed_fields(outcome.managed)
        return result

    def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        status: Obj,
        *,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Replace the status subresource (`resource_version` a precondition); `dry_run`
        checks everything and returns the result without storing it."""
        if not isinstance(status, Mapping):
            raise Invalid(f"{kind} {name}: status must be a mapping")
        problem = not_json(dict(status))
        if problem:
            raise Invalid(f"{kind} {name}: status: {problem}")
        with self._db.write() as conn:
            key = self._key(self._resolve(conn, api_version, kind), name, namespace)
            live = database.fetch(conn, key)
            if live is None:
                raise NotFound(f"{key} not found")
            preconditions.check_version(key, resource_version, live)
            if live.get("status") == status:
                return _presented(live, api_version)
            updated = clone(live)
            updated["status"] = clone(dict(status))
            if dry_run:
                return _presented(updated, api_version)
            stored = self._commit(conn, updated, live)
        return _presented(stored, api_version)

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: PropagationPolicy = "Background",
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        """Delete, garbage-collecting dependents by `propagation_policy`; `uid` and
        `resource_version` are preconditions (`Conflict` when the live object differs)."""
        if propagation_policy not in ("Foreground", "Background", "Orphan"):
            raise Invalid(f"unknown propagation policy {propagation_policy!r}")
        with self._db.write() as conn:
            key = self._key(self._resolve(conn, api_version, kind), name, namespace)
            live = database.fetch(conn, key)
            if live is None:
                raise NotFound(f"{key} not found")
            precondition = {"uid": uid, "resourceVersion": resource_version}
            preconditions.check_preconditions({"metadata": precondition}, live, key)
            now = self.clock.now()
            writes.start_deletion(conn, live, propagation_policy, now=now)
            # Its owners may wait for it (foreground), its Namespace or CRD to be empty.
            followups = [live["metadata"]["uid"], *gc.owner_uids(live),
                         *writes.containers_of(conn, live)]
            writes.collect_garbage(conn, followups, now=now)
            self._compact_if_due(conn)

    # ---- watch -----------------------------------------------------------------------

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: float = 0.0,
    ) -> Iterator[WatchEvent]:
        with self._db.read() as conn:
            served = self._resolve(conn, api_version, kind)
        if namespace and not served.namespaced:
            raise Invalid(f"{kind} is cluster-scoped; it takes no namespace ({namespace!r})")
        return watching.watch_events(
            self._db, served, api_version=api_version, namespace=namespace,
            resource_version=resource_version, timeout_seconds=timeout_seconds,
        )

    def record_event(
        self,
        involved: Obj,
        *,
        reason: str,
        message: str,
        event_type: events.EventType = "Normal",
        component: str = "headway",
    ) -> Obj:
        """Record a Kubernetes Event about `involved` (see `events.record_event`)."""
        return events.record_event(
            self, self.clock, involved=involved, reason=reason, message=message,
            event_type=event_type, component=component,
        )

    def compact(self, *, keep: int) -> int:
        """Forget watch events older than the newest `keep`; returns the compacted revision."""
        with self._db.write() as conn:
            return database.compact(conn, keep=keep)

    # ---- helpers ---------------------------------------------------------------------

    def _now(self) -> str:
        return format_time(self.clock.now())

    def _commit(self, conn: sqlite3.Connection, new: Obj, old: Obj | None) -> Obj:
        if _is_crd(new) and "deletionTimestamp" not in new["metadata"]:
            new["status"] = crd_status.served_status(new, now=self._now())  # served now
        stored = writes.commit(conn, new, old)
        uids = _gc_followups(conn, stored, old)
        if uids:
            writes.collect_garbage(conn, uids, now=self.clock.now())
        self._compact_if_due(conn)
        return stored

    def _compact_if_due(self, conn: sqlite3.Connection) -> None:
        revision = database.counter(conn, "revision")
        if revision - database.counter(conn, "compacted") > 2 * self._event_history:
            database.compact(conn, keep=self._event_history)

    def _live_for_write(self, conn: sqlite3.Connection, served: ServedKind, obj: Obj) -> Obj:
        key = self._key(served, obj["metadata"]["name"], obj["metadata"].get("namespace"))
        live = database.fetch(conn, key)
        if live is None:
            raise NotFound(f"{key} not found")
        preconditions.check_preconditions(obj, live, key)
        return live

    def _new_object(self, conn: sqlite3.Connection, served: ServedKind, obj: Obj) -> Obj:
        """The server-set skeleton of a new object: identity, uid, creationTimestamp."""
        meta = obj["metadata"]
        namespace = meta.get("namespace")
        name = meta.get("name") or self._generated_name(conn, served, meta, namespace)
        key = self._key(served, name, namespace)
        if database.fetch(conn, key) is not None:
            raise AlreadyExists(f"{key} already exists")
        if key.namespace:
            self._check_namespace(conn, key)
        skeleton: dict[str, Any] = {"name": name}
        if key.namespace:
            skeleton["namespace"] = key.namespace
        if meta.get("generateName"):
            skeleton["generateName"] = meta["generateName"]
        skeleton["uid"] = str(uuid.uuid4())
        skeleton["creationTimestamp"] = self._now()
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": skeleton}

    def _generated_name(
        self,
        conn: sqlite3.Connection,
        served: ServedKind,
        meta: Mapping[str, Any],
        namespace: str | None,
    ) -> str:
        prefix = str(meta["generateName"])
        for _ in range(100):
            suffix = "".join(secrets.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))
            candidate = prefix + suffix
            if database.fetch(conn, self._key(served, candidate, namespace)) is None:
                return candidate
        raise Conflict(f"could not generate a free name from {prefix!r}")

    def _check_namespace(self, conn: sqlite3.Connection, key: ObjectKey) -> None:
        if key.namespace in IMPLICIT_NAMESPACES:
            return
        namespace = database.fetch(conn, ObjectKey("", "Namespace", "", key.namespace))
        if namespace is None:
            raise NamespaceNotFound(f"{key}: namespace {key.namespace!r} not found",
                                    key.namespace)
        if "deletionTimestamp" in namespace["metadata"]:
            raise Conflict(f"{key}: namespace {key.namespace!r} is being terminated")


def _is_crd(obj: Obj) -> bool:
    return obj["kind"] == "CustomResourceDefinition" and str(obj["apiVersion"]).startswith(
        CRD_GROUP + "/")


def _selector(label_selector: SelectorLike) -> Any:
    try:
        return to_selector(label_selector)
    except SelectorError as error:
        raise Invalid(str(error)) from None


def _presented(obj: Obj, api_version: str) -> Obj:
    """The object as the caller asked for it (the store does no schema conversion).

    Every object handed in is the store's own fresh copy, so it is changed in place."""
    obj["apiVersion"] = api_version
    return obj


def _same_ownership(
    before: tuple[ssa.ManagedEntry, ...], after: tuple[ssa.ManagedEntry, ...]
) -> bool:
    def shape(entries: tuple[ssa.ManagedEntry, ...]) -> set[tuple[str, str, frozenset[Any]]]:
        return {(e.manager, e.operation, e.fields) for e in entries}

    return shape(before) == shape(after)


def _gc_followups(conn: sqlite3.Connection, stored: Obj, old: Obj | None) -> list[str]:
    """The objects whose garbage collection a write may have moved on.

    A deleting (or just purged) object: itself, its owners (one may wait for it in the
    foreground) and its Namespace or CRD (which may wait to be empty). Any other object
    with owners: itself (are they all gone?), and owners it stopped naming (one may have
    waited for it).
    """
    uid = stored["metadata"]["uid"]
    owners, old_owners = gc.owner_uids(stored), gc.owner_uids(old) if old else []
    dropped = [o for o in old_owners if o not in owners]
    if gc.is_deleting(stored):
        return [uid, *owners, *dropped, *writes.containers_of(conn, stored)]
    if owners or old_owners:
        return [uid, *dropped]
    return []
