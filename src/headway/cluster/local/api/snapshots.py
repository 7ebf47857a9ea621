"""A kind's objects as they were at an earlier revision, rebuilt from the event log.

Kubernetes serves every page of a paginated list from the first page's snapshot. The local
store keeps only each object's newest version, but every change since the last compaction
is in the `events` table with the whole object, so the state at revision R is: each object
unchanged since R as it is now, and each object changed after R as its last event at or
before R says (absent when that was a deletion, or when its first change after R created
it). When that last event was compacted away the snapshot cannot be rebuilt: `Expired`,
Kubernetes' `410` for a continue token older than the history.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Expired
from headway.cluster.local.api import database
from headway.cluster.local.api.kinds import ServedKind
from headway.model.obj import Obj

__all__ = ["Snapshot", "objects_at"]

Key = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Snapshot:
    """Objects of a list as they were at a revision, and how many there are in all when
    only the first ones were read (None when `objects` is all of them)."""

    objects: list[Obj]
    total: int | None


def objects_at(
    conn: sqlite3.Connection,
    served: ServedKind,
    *,
    revision: int,
    namespace: str | None,
    equalities: dict[str, str],
    after: Key | None,
    first: int | None = None,
) -> Snapshot:
    """Objects of `served` (in `namespace`, keyed after `after`) as they were at `revision`,
    in (namespace, name) order, narrowed by the label `equalities`. With `first`, only the
    first that many (enough for a page) are read, and `total` counts them all; without it
    the caller may narrow further by the rest of its selector."""
    bodies = database.select(conn, served.group, served.kind, namespace=namespace,
                             equalities=equalities, after=after, max_revision=revision,
                             limit=first)
    kept = [database.loads(body) for body in bodies]
    changed = _first_change_after(conn, served, revision=revision, namespace=namespace)
    existed = {key for key, kind_of_change in changed.items()
               if (after is None or key > after) and kind_of_change != "ADDED"}
    rebuilt = [o for o in _states_at(conn, served, existed, revision=revision,
                                     namespace=namespace)
               if _has_labels(o, equalities)]
    objects = sorted([*kept, *rebuilt], key=_key_of)
    if first is None:
        return Snapshot(objects, None)
    unchanged = database.count(conn, served.group, served.kind, namespace=namespace,
                               equalities=equalities, after=after, max_revision=revision)
    return Snapshot(objects[:first], unchanged + len(rebuilt))


def _has_labels(obj: Obj, equalities: dict[str, str]) -> bool:
    labels = obj["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in equalities.items())


def _key_of(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (str(meta.get("namespace") or ""), str(meta["name"]))


def _first_change_after(
    conn: sqlite3.Connection, served: ServedKind, *, revision: int, namespace: str | None
) -> dict[Key, str]:
    """The type of each object's first event after `revision`, by key."""
    sql = ("SELECT type, namespace, json_extract(body, '$.metadata.name') FROM events "
           "WHERE grp = ? AND kind = ? AND rv > ?")
    params: list[Any] = [served.group, served.kind, revision]
    if namespace:
        sql += " AND namespace = ?"
        params.append(namespace)
    first: dict[Key, str] = {}
    for event_type, event_namespace, name in conn.execute(sql + " ORDER BY rv", params):
        first.setdefault((str(event_namespace), str(name)), str(event_type))
    return first


def _states_at(
    conn: sqlite3.Connection,
    served: ServedKind,
    keys: set[Key],
    *,
    revision: int,
    namespace: str | None,
) -> list[Obj]:
    """The objects of `keys` as their last events at or before `revision` left them (one
    pass over the log, newest first); `Expired` when one's last event was compacted away."""
    if not keys:
        return []
    sql = ("SELECT type, namespace, json_extract(body, '$.metadata.name'), body FROM events "
           "WHERE grp = ? AND kind = ? AND rv <= ?")
    params: list[Any] = [served.group, served.kind, revision]
    if namespace:
        sql += " AND namespace = ?"
        params.append(namespace)
    last: dict[Key, tuple[str, str]] = {}
    for event_type, event_namespace, name, body in conn.execute(sql + " ORDER BY rv DESC",
                                                                params):
        key = (str(event_namespace), str(name))
        if key in keys and key not in last:
            last[key] = (str(event_type), str(body))
            if len(last) == len(keys):
                break
    missing = sorted(keys - last.keys())
    if missing:
        ns, name = missing[0]
        raise Expired(
            f"the list at revision {revision} cannot be continued: the history no longer "
            f"holds {ns + '/' if ns else ''}{name} as it was then; list again"
        )
    return [database.loads(body) for event_type, body in last.values()
            if event_type != "DELETED"]
