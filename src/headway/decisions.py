"""The decision journal: durable, bounded records of why an operation went the way it did.

What the objects keep is not enough to audit a decision afterwards. An AnalysisRun's status
keeps only the last `measurementRetention` measurements of a metric (Argo's bound, 10 by
default), and an Application's `operationState.message` is overwritten at every step, so
which wave waited on which resource, and in what health, is gone once the sync moves on.
The controllers therefore append each decision here as it is taken: every measurement with
its value, the query as it ran (secrets already masked by the caller) and the conditions and
limits it was judged by; the verdict with its reason; each sync step applied and each wait
with its blockers.

Why a SQLite file in the state directory and not status fields: the records outlive the
status bound on purpose, they must not grow the objects every watcher receives, and status
fields Argo's own CRDs do not declare are pruned by a real API server; the state directory
exists for every `headway serve`, on either backend. The journal is bounded: per subject
(an AnalysisRun, an Application) the last `keep_operations` operations, and per operation
at most `max_records` records (later ones are counted, not stored).

Records are JSON mappings with a `type`; the writer decides their shape and the reader
(`headway explain`) reads what it knows and shows the rest as it is.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "DecisionJournal",
    "DecisionRecord",
    "NullJournal",
    "SqliteJournal",
    "Subject",
    "journal_path",
]

JOURNAL_FILE = "decisions.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    operation TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (kind, namespace, name, operation, seq)
);
CREATE TABLE IF NOT EXISTS operations (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    operation TEXT NOT NULL, opened INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, namespace, name, operation)
);
"""


def journal_path(state_dir: Path) -> Path:
    return state_dir / JOURNAL_FILE


@dataclass(frozen=True, order=True)
class Subject:
    """What a record is about: `AnalysisRun shop/web-abc-2`, `Application argocd/web`."""

    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class DecisionRecord:
    subject: Subject
    operation: str  # the run's uid, the sync operation's start time
    seq: int
    at: str  # RFC 3339
    type: str
    data: Mapping[str, Any]


class DecisionJournal(Protocol):
    def record(
        self, subject: Subject, *, operation: str, at: datetime, type: str, data: Mapping[str, Any]
    ) -> None: ...

    def operations(self, subject: Subject) -> list[str]:
        """The kept operations of `subject`, oldest first."""
        ...

    def records(self, subject: Subject, operation: str) -> tuple[list[DecisionRecord], int]:
        """The operation's records in order, and how many were dropped past the bound."""
        ...


class NullJournal:
    """Keeps nothing (an engine built without a state directory, the unit tests)."""

    def record(
        self, subject: Subject, *, operation: str, at: datetime, type: str, data: Mapping[str, Any]
    ) -> None:
        return None

    def operations(self, subject: Subject) -> list[str]:
        return []

    def records(self, subject: Subject, operation: str) -> tuple[list[DecisionRecord], int]:
        return [], 0


class SqliteJournal:
    """The journal in one SQLite file; safe to share between the controllers' threads."""

    def __init__(self, path: Path, *, keep_operations: int = 10, max_records: int = 2000) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._keep = keep_operations
        self._max = max_records

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def record(
        self, subject: Subject, *, operation: str, at: datetime, type: str, data: Mapping[str, Any]
    ) -> None:
        key = (subject.kind, subject.namespace, subject.name)
        text = json.dumps(dict(data), sort_keys=True, default=str)
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            count = self._open(key, operation)
            if count >= self._max:
                self._db.execute(
                    "UPDATE operations SET dropped = dropped + 1 WHERE kind=? AND namespace=? "
                    "AND name=? AND operation=?",
                    (*key, operation),
                )
                return
            self._db.execute(
                "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, operation, count, at.isoformat(), type, text),
            )

    def _open(self, key: tuple[str, str, str], operation: str) -> int:
        """The operation's record count, opening it (and forgetting the oldest past the
        bound) when it is new."""
        row = self._db.execute(
            "SELECT COUNT(*) FROM operations WHERE kind=? AND namespace=? AND name=? "
            "AND operation=?",
            (*key, operation),
        ).fetchone()
        if row[0] == 0:
            opened = self._db.execute(
                "SELECT COALESCE(MAX(opened), 0) + 1 FROM operations WHERE kind=? AND "
                "namespace=? AND name=?",
                key,
            ).fetchone()[0]
            self._db.execute(
                "INSERT INTO operations VALUES (?, ?, ?, ?, ?, 0)", (*key, operation, opened)
            )
            self._forget_old(key)
        return int(
            self._db.execute(
                "SELECT COUNT(*) FROM records WHERE kind=? AND namespace=? AND name=? "
                "AND operation=?",
                (*key, operation),
            ).fetchone()[0]
        )

    def _forget_old(self, key: tuple[str, str, str]) -> None:
        old = self._db.execute(
            "SELECT operation FROM operations WHERE kind=? AND namespace=? AND name=? "
            "ORDER BY opened DESC LIMIT -1 OFFSET ?",
            (*key, self._keep),
        ).fetchall()
        for (operation,) in old:
            for table in ("records", "operations"):
                self._db.execute(
                    f"DELETE FROM {table} WHERE kind=? AND namespace=? AND name=? AND operation=?",
                    (*key, operation),
                )

    def operations(self, subject: Subject) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT operation FROM operations WHERE kind=? AND namespace=? AND name=? "
                "ORDER BY opened",
                (subject.kind, subject.namespace, subject.name),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def records(self, subject: Subject, operation: str) -> tuple[list[DecisionRecord], int]:
        key = (subject.kind, subject.namespace, subject.name, operation)
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, at, type, data FROM records WHERE kind=? AND namespace=? AND "
                "name=? AND operation=? ORDER BY seq",
                key,
            ).fetchall()
            dropped = self._db.execute(
                "SELECT dropped FROM operations WHERE kind=? AND namespace=? AND name=? "
                "AND operation=?",
                key,
            ).fetchone()
        found = [
            DecisionRecord(subject, operation, int(seq), str(at), str(kind), json.loads(data))
            for seq, at, kind, data in rows
        ]
        return found, int(dropped[0]) if dropped else 0
