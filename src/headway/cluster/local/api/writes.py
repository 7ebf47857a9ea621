"""Writes inside one transaction: revisions, generation, purge, and garbage collection.

Every function takes the open write transaction's connection; the store opens it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime

from headway.cluster.local.api import database, gc
from headway.cluster.local.api.jsonvalues import clone
from headway.cluster.local.api.kinds import BUILTIN_KINDS, split_api_version
from headway.cluster.local.api.objects import ObjectKey, spec_part
from headway.cluster.protocol import PropagationPolicy
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = [
    "collect_garbage",
    "commit",
    "containers_of",
    "key_of",
    "start_deletion",
]

_BUILTIN_GROUPS = frozenset(split_api_version(k.api_version)[0] for k in BUILTIN_KINDS)
# Far more than any real chain of owners; stops a cycle of owner references.
_GC_STEP_LIMIT = 100_000


def key_of(obj: Obj) -> ObjectKey:
    meta = obj["metadata"]
    group, _ = split_api_version(obj["apiVersion"])
    return ObjectKey(group, obj["kind"], meta.get("namespace") or "", meta["name"])


def commit(conn: sqlite3.Connection, new: Obj, old: Obj | None) -> Obj:
    """Store `new` at the next revision, bumping generation when the spec changed or
    deletion started.

    An object marked for deletion whose last finalizer is gone is purged instead.
    Returns what was stored (with `resourceVersion` set): `new` itself, which the caller
    hands over.
    """
    stored = new
    meta = stored["metadata"]
    if old is None:
        meta["generation"] = 1
    else:
        # Kubernetes also bumps it when deletion starts: the object's meaning changed.
        generation = int(old["metadata"].get("generation", 1))
        deletion_started = "deletionTimestamp" in meta and "deletionTimestamp" not in old[
            "metadata"]
        meta["generation"] = generation + (
            deletion_started or spec_part(old) != spec_part(stored)
        )
    revision = database.next_revision(conn)
    meta["resourceVersion"] = str(revision)
    if "deletionTimestamp" in meta and not meta.get("finalizers"):
        _purge(conn, stored)
        return stored
    database.store(conn, key_of(stored), stored, event="ADDED" if old is None else "MODIFIED")
    return stored


def _purge(conn: sqlite3.Connection, obj: Obj) -> None:
    database.remove(conn, key_of(obj), obj, database.next_revision(conn))


def start_deletion(
    conn: sqlite3.Connection, obj: Obj, policy: PropagationPolicy, *, now: datetime
) -> None:
    """Mark `obj` for deletion (or purge it at once when nothing holds it)."""
    uid = obj["metadata"]["uid"]
    if policy == "Orphan":
        _orphan_dependents(conn, uid)
    if gc.is_deleting(obj):
        return
    finalizers = gc.finalizers_for_deletion(obj, policy)
    if not finalizers:
        _purge(conn, obj)
        return
    marked = clone(obj)
    marked["metadata"]["deletionTimestamp"] = format_time(now)
    marked["metadata"]["deletionGracePeriodSeconds"] = 0
    marked["metadata"]["finalizers"] = finalizers
    if obj["kind"] == "Namespace" and obj["apiVersion"] == "v1":
        marked["status"] = dict(marked.get("status") or {}, phase="Terminating")
    commit(conn, marked, obj)


def _orphan_dependents(conn: sqlite3.Connection, owner_uid: str) -> None:
    for dependent in dependents_of(conn, owner_uid):
        _without_owners(conn, dependent, {owner_uid})


def _without_owners(conn: sqlite3.Connection, obj: Obj, owner_uids: set[str]) -> None:
    freed = clone(obj)
    refs = [r for r in freed["metadata"]["ownerReferences"] if r.get("uid") not in owner_uids]
    if refs:
        freed["metadata"]["ownerReferences"] = refs
    else:
        del freed["metadata"]["ownerReferences"]
    commit(conn, freed, obj)


def _drop_owner_references(
    conn: sqlite3.Connection, action: gc.DropOwnerReferences
) -> list[str]:
    current = database.fetch_by_uid(conn, action.uid)
    if current is None:
        return []
    _without_owners(conn, current, set(action.owner_uids))
    return [action.uid, *action.owner_uids]


def dependents_of(conn: sqlite3.Connection, owner_uid: str) -> list[Obj]:
    rows = conn.execute(
        "SELECT o.body FROM owner_refs r JOIN objects o ON o.uid = r.dependent_uid "
        "WHERE r.owner_uid = ? ORDER BY o.rv",
        (owner_uid,),
    ).fetchall()
    return [database.loads(row[0]) for row in rows]


def collect_garbage(conn: sqlite3.Connection, uids: Iterable[str], *, now: datetime) -> None:
    """Carry garbage collection forward from the objects `uids` until nothing is left to do."""
    queue = list(dict.fromkeys(uids))
    gone: set[str] = set()
    steps = 0
    while queue and steps < _GC_STEP_LIMIT:
        steps += 1
        uid = queue.pop(0)
        obj = database.fetch_by_uid(conn, uid)
        if obj is None:
            # Its dependents may be dangling now; owner_refs still names it as their owner.
            if uid not in gone:
                gone.add(uid)
                queue.extend(d["metadata"]["uid"] for d in dependents_of(conn, uid))
            continue
        deleting = gc.is_deleting(obj)
        if not deleting and not gc.owner_uids(obj):
            continue  # nothing to collect and nothing it waits for
        owners = {o: database.fetch_by_uid(conn, o) for o in gc.owner_uids(obj)}
        # Only an object being deleted acts on its dependents and contents: load them then.
        dependents = dependents_of(conn, uid) if deleting else []
        contents = _contents(conn, obj) if deleting else []
        owned = not deleting and any(gc.waits_for_dependents(o) for o in owners.values()) and (
            _has_dependents(conn, uid))
        actions = gc.decide(obj, owners=owners, dependents=dependents, contents=contents,
                            has_dependents=owned)
        for action in actions:
            queue.extend(_carry_out(conn, action, obj, now=now))
        if contents and actions:
            queue.append(uid)  # look again once the contents are purged


def _has_dependents(conn: sqlite3.Connection, uid: str) -> bool:
    row = conn.execute("SELECT 1 FROM owner_refs WHERE owner_uid = ? LIMIT 1", (uid,))
    return row.fetchone() is not None


def _contents(conn: sqlite3.Connection, obj: Obj) -> list[Obj]:
    """What a deleting Namespace or CRD still holds (nothing for other objects)."""
    finalizer = gc.container_finalizer(obj)
    if finalizer is None or finalizer not in obj["metadata"].get("finalizers", []):
        return []
    if finalizer == gc.NAMESPACE_FINALIZER:
        sql, params = "SELECT body FROM objects WHERE namespace = ?", [obj["metadata"]["name"]]
    else:
        spec = obj.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind", "")
        sql, params = "SELECT body FROM objects WHERE grp = ? AND kind = ?", [
            spec.get("group", ""), kind]
    return [database.loads(row[0]) for row in conn.execute(sql + " ORDER BY rv", params)]


def containers_of(conn: sqlite3.Connection, obj: Obj) -> list[str]:
    """Uids of the Namespace and the CRD that hold `obj`, where they exist."""
    key = key_of(obj)
    found = []
    if key.namespace:
        namespace = database.fetch(conn, ObjectKey("", "Namespace", "", key.namespace))
        found.append(namespace)
    if key.group not in _BUILTIN_GROUPS:
        row = conn.execute(
            "SELECT body FROM objects WHERE grp = 'apiextensions.k8s.io' AND kind = "
            "'CustomResourceDefinition' AND json_extract(body, '$.spec.group') = ? "
            "AND json_extract(body, '$.spec.names.kind') = ?",
            (key.group, key.kind),
        ).fetchone()
        found.append(database.loads(row[0]) if row else None)
    return [o["metadata"]["uid"] for o in found if o is not None]


def _carry_out(
    conn: sqlite3.Connection,
    action: gc.GcAction,
    obj: Obj,
    *,
    now: datetime,
) -> list[str]:
    """Do one action; return the uids whose garbage collection it may have changed."""
    if isinstance(action, gc.Purge):
        _purge(conn, obj)
        return [action.uid, *gc.owner_uids(obj), *containers_of(conn, obj)]
    if isinstance(action, gc.DropFinalizer):
        current = database.fetch_by_uid(conn, action.uid) or obj
        updated = clone(current)
        updated["metadata"]["finalizers"] = [
            f for f in current["metadata"].get("finalizers", []) if f != action.finalizer
        ]
        commit(conn, updated, current)
        return [action.uid, *gc.owner_uids(obj)]
    if isinstance(action, gc.Revisit):
        return [action.uid]
    if isinstance(action, gc.DropOwnerReferences):
        return _drop_owner_references(conn, action)
    target = database.fetch_by_uid(conn, action.uid)
    if target is not None:
        start_deletion(conn, target, action.policy, now=now)
    return [action.uid, *gc.owner_uids(target or obj)]
