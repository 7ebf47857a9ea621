"""The SQLite file behind the local store: schema, transactions and row writes.

One file in WAL mode, opened by every process that uses the store (the runtime daemon and
CLI commands at once). Every write runs in a `BEGIN IMMEDIATE` transaction, so writers
queue on SQLite's lock and the global revision counter (etcd's "revision") is bumped by one
writer at a time. Each changed object gets the next revision as its resourceVersion, and
each change is also appended to the `events` table that watches read.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.local.api.objects import ObjectKey
from headway.model.obj import Obj

__all__ = ["Database"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters VALUES ('revision', 0), ('compacted', 0);
CREATE TABLE IF NOT EXISTS objects (
    grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    uid TEXT NOT NULL UNIQUE, rv INTEGER NOT NULL, deleting INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (grp, kind, namespace, name)
);
CREATE INDEX IF NOT EXISTS objects_deleting ON objects (deleting) WHERE deleting = 1;
CREATE TABLE IF NOT EXISTS labels (
    uid TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (uid, key)
);
CREATE INDEX IF NOT EXISTS labels_by_pair ON labels (key, value);
CREATE TABLE IF NOT EXISTS owner_refs (
    dependent_uid TEXT NOT NULL, owner_uid TEXT NOT NULL, block INTEGER NOT NULL,
    PRIMARY KEY (dependent_uid, owner_uid)
);
CREATE INDEX IF NOT EXISTS owner_refs_by_owner ON owner_refs (owner_uid);
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL, grp TEXT NOT NULL, kind TEXT NOT NULL,
    namespace TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_kind ON events (grp, kind, rv);
"""

class Database:
    """A connection to the store's file, safe to share between threads of one process."""

    def __init__(self, path: Path, *, busy_timeout_seconds: float = 30.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        with self._translated_errors():
            self._conn = sqlite3.connect(
                str(path), timeout=busy_timeout_seconds, isolation_level=None,
                check_same_thread=False,
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            with self.write() as conn:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """SQLite's errors leave the store as `ClusterError`s naming the file."""
        try:
            yield
        except sqlite3.Error as error:
            raise ClusterError(f"local store {self.path}: {error}") from error

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding SQLite's write lock from its start."""
        with self._lock, self._translated_errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def single(self) -> Iterator[sqlite3.Connection]:
        """The connection for reads that need no shared snapshot (each statement is one)."""
        with self._lock, self._translated_errors():
            yield self._conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees one snapshot."""
        with self._lock, self._translated_errors():
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")


def next_revision(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "UPDATE counters SET value = value + 1 WHERE name = 'revision' RETURNING value"
    ).fetchone()
    return int(row[0])


def counter(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
    return int(row[0])


def fetch(conn: sqlite3.Connection, key: ObjectKey) -> Obj | None:
    row = conn.execute(
        "SELECT body FROM objects WHERE grp=? AND kind=? AND namespace=? AND name=?",
        (key.group, key.kind, key.namespace, key.name),
    ).fetchone()
    return None if row is None else loads(row[0])


def fetch_by_uid(conn: sqlite3.Connection, uid: str) -> Obj | None:
    row = conn.execute("SELECT body FROM objects WHERE uid = ?", (uid,)).fetchone()
    return None if row is None else loads(row[0])


def store(conn: sqlite3.Connection, key: ObjectKey, obj: Obj, *, event: str) -> None:
    """Write `obj` (its resourceVersion already set) and record the watch event."""
    meta = obj["metadata"]
    uid, rv = meta["uid"], int(meta["resourceVersion"])
    body = json.dumps(obj, separators=(",", ":"))
    conn.execute(
        "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (key.group, key.kind, key.namespace, key.name, uid, rv,
         int("deletionTimestamp" in meta), body),
    )
    conn.execute("DELETE FROM labels WHERE uid = ?", (uid,))
    conn.executemany(
        "INSERT INTO labels VALUES (?, ?, ?)",
        [(uid, k, v) for k, v in (meta.get("labels") or {}).items()],
    )
    conn.execute("DELETE FROM owner_refs WHERE dependent_uid = ?", (uid,))
    conn.executemany(
        "INSERT OR REPLACE INTO owner_refs VALUES (?, ?, ?)",
        [(uid, r["uid"], int(bool(r.get("blockOwnerDeletion"))))
         for r in meta.get("ownerReferences") or []],
    )
    _record_event(conn, key, rv, event, body)


def remove(conn: sqlite3.Connection, key: ObjectKey, obj: Obj, rv: int) -> None:
    """Delete `obj` for good; its DELETED event carries its last state at revision `rv`."""
    uid = obj["metadata"]["uid"]
    conn.execute("DELETE FROM objects WHERE uid = ?", (uid,))
    conn.execute("DELETE FROM labels WHERE uid = ?", (uid,))
    conn.execute("DELETE FROM owner_refs WHERE dependent_uid = ?", (uid,))
    gone = dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(rv)))
    _record_event(conn, key, rv, "DELETED", json.dumps(gone, separators=(",", ":")))


def _record_event(
    conn: sqlite3.Connection, key: ObjectKey, rv: int, event: str, body: str
) -> None:
    conn.execute(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
        (rv, event, key.group, key.kind, key.namespace, body),
    )


def loads(body: str) -> Obj:
    loaded: Any = json.loads(body)
    return dict(loaded)


def select(
    conn: sqlite3.Connection,
    group: str,
    kind: str,
    *,
    namespace: str | None,
    equalities: dict[str, str],
    after: tuple[str, str] | None = None,
    max_revision: int | None = None,
    limit: int | None = None,
) -> list[str]:
    """Bodies of a kind's objects in (namespace, name) order, narrowed by namespace, by
    `key=value` label pairs (through the labels index), to keys `after` one (a page's
    start), to objects last written at or before `max_revision`, and to the first `limit`;
    the caller applies the rest of the selector."""
    where, params = _object_filter(group, kind, namespace=namespace, equalities=equalities,
                                   after=after, max_revision=max_revision)
    sql = f"SELECT body FROM objects WHERE {where} ORDER BY namespace, name"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [row[0] for row in conn.execute(sql, params)]


def count(
    conn: sqlite3.Connection,
    group: str,
    kind: str,
    *,
    namespace: str | None,
    equalities: dict[str, str],
    after: tuple[str, str] | None = None,
    max_revision: int | None = None,
) -> int:
    """How many objects `select` with the same narrowing (and no limit) would return."""
    where, params = _object_filter(group, kind, namespace=namespace, equalities=equalities,
                                   after=after, max_revision=max_revision)
    return int(conn.execute(f"SELECT count(*) FROM objects WHERE {where}", params).fetchone()[0])


def _object_filter(
    group: str,
    kind: str,
    *,
    namespace: str | None,
    equalities: dict[str, str],
    after: tuple[str, str] | None,
    max_revision: int | None,
) -> tuple[str, list[Any]]:
    # With label pairs, `+` keeps SQLite (which has no statistics) from scanning every
    # object of the kind through the primary key: it starts from the labels index, so one
    # app's objects cost the size of the answer, not of the fleet (bench/bench_scale.py).
    unindexed = "+" if equalities else ""
    where = f"{unindexed}grp = ? AND {unindexed}kind = ?"
    params: list[Any] = [group, kind]
    if namespace:
        where += f" AND {unindexed}namespace = ?"
        params.append(namespace)
    if after is not None:
        where += " AND (namespace, name) > (?, ?)"
        params += list(after)
    if max_revision is not None:
        where += " AND rv <= ?"
        params.append(max_revision)
    for key, value in sorted(equalities.items()):
        where += " AND uid IN (SELECT uid FROM labels WHERE key = ? AND value = ?)"
        params += [key, value]
    return where, params


def label_token(conn: sqlite3.Connection, key: str, value: str) -> tuple[int, int]:
    """(how many objects carry the label `key=value`, the newest resourceVersion among them).

    Every write gives its object a revision above all others, so any create, change or
    relabel of such an object raises the second number, and a delete or an unlabel lowers
    the first: the pair moves whenever the labelled set does, and only then."""
    row = conn.execute(
        "SELECT COUNT(*), COALESCE(MAX(o.rv), 0) FROM labels AS l"
        " JOIN objects AS o ON o.uid = l.uid WHERE l.key = ? AND l.value = ?",
        (key, value),
    ).fetchone()
    return int(row[0]), int(row[1])


def labelled(conn: sqlite3.Connection, key: str, value: str) -> list[str]:
    """Bodies of every object labelled `key=value`, by kind, namespace and name."""
    rows = conn.execute(
        "SELECT o.body FROM labels AS l JOIN objects AS o ON o.uid = l.uid"
        " WHERE l.key = ? AND l.value = ? ORDER BY o.grp, o.kind, o.namespace, o.name",
        (key, value),
    )
    return [str(row[0]) for row in rows]


def compact(conn: sqlite3.Connection, *, keep: int) -> int:
    """Drop all but the newest `keep` revisions of events; returns the compacted revision."""
    revision = counter(conn, "revision")
    compacted = max(counter(conn, "compacted"), revision - max(0, keep))
    conn.execute("DELETE FROM events WHERE rv <= ?", (compacted,))
    conn.execute("UPDATE counters SET value = ? WHERE name = 'compacted'", (compacted,))
    return compacted


def events_after(
    conn: sqlite3.Connection,
    group: str,
    kind: str,
    *,
    after: int,
    namespace: str | None,
    limit: int,
) -> list[tuple[int, str, str]]:
    """(revision, type, body) of a kind's events after revision `after`, oldest first."""
    sql = "SELECT rv, type, body FROM events WHERE grp = ? AND kind = ? AND rv > ?"
    params: list[Any] = [group, kind, after]
    if namespace:
        sql += " AND namespace = ?"
        params.append(namespace)
    sql += " ORDER BY rv LIMIT ?"
    params.append(limit)
    return [(int(r[0]), str(r[1]), str(r[2])) for r in conn.execute(sql, params)]
