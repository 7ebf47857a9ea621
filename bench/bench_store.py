"""What do Kubernetes semantics cost over raw SQLite in the local store?

Times, against a baseline of plain sqlite3 statements on the same JSON bodies in the same
run (same file settings: WAL, synchronous=NORMAL, one transaction per write):

  create        LocalCluster.create            vs  INSERT of the JSON body
  get           LocalCluster.get               vs  SELECT by primary key + json.loads
  list-label    list(label_selector="app=...")  vs  SELECT on an indexed label column + loads
  apply-update  apply changing the image        vs  UPDATE of the JSON body by primary key
  watch         events read through watch()     vs  SELECT of event rows + json.loads

Ratios are "store is N times slower than raw" (higher = more overhead).

Run: .venv/bin/python bench/bench_store.py
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster

OBJECTS = 1500
GROUPS = 15  # label values: each list-by-label returns OBJECTS / GROUPS objects
LISTS = 60


def pod(i: int, image: str = "web:1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{i}",
            "namespace": "default",
            "labels": {"app": f"group-{i % GROUPS}", "tier": "front"},
            "annotations": {"headway.dev/revision": str(i)},
        },
        "spec": {
            "containers": [{
                "name": "main",
                "image": image,
                "command": ["python", "-m", "http.server"],
                "ports": [{"containerPort": 8080, "name": "http"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_INDEX", "value": str(i)}],
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}},
            }],
        },
    }


def timed(label: str, count: int, work: Callable[[], object]) -> tuple[str, float]:
    start = time.perf_counter()
    work()
    return label, count / (time.perf_counter() - start)


def run_store(path: Path) -> dict[str, float]:
    results: dict[str, float] = {}
    with LocalCluster(path, SystemClock()) as store:
        # Watch from a real revision ("0" would mean "current state, then changes").
        start_rv = store.create(pod(-1), field_manager="bench")["metadata"]["resourceVersion"]
        for label, rate in (
            timed("create", OBJECTS,
                  lambda: [store.create(pod(i), field_manager="bench") for i in range(OBJECTS)]),
            timed("get", OBJECTS,
                  lambda: [store.get("v1", "Pod", f"web-{i}", "default")
                           for i in range(OBJECTS)]),
            timed("list-label", LISTS,
                  lambda: [store.list("v1", "Pod", label_selector=f"app=group-{n % GROUPS}")
                           for n in range(LISTS)]),
            timed("apply-update", OBJECTS,
                  lambda: [store.apply(pod(i, "web:2"), field_manager="bench")
                           for i in range(OBJECTS)]),
        ):
            results[label] = rate
        events = 2 * OBJECTS
        label, rate = timed("watch", events, lambda: _drain(store, start_rv, events))
        results[label] = rate
    return results


def _drain(store: LocalCluster, since: str, expected: int) -> None:
    seen = sum(1 for _ in store.watch("v1", "Pod", resource_version=since))
    assert seen == expected, (seen, expected)


def run_raw(path: Path) -> dict[str, float]:
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE objects (name TEXT PRIMARY KEY, app TEXT, body TEXT)")
    conn.execute("CREATE INDEX objects_app ON objects (app)")
    conn.execute("CREATE TABLE events (rv INTEGER PRIMARY KEY, body TEXT)")

    def write(sql: str, params: tuple[Any, ...], event: str) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(sql, params)
        conn.execute("INSERT INTO events (body) VALUES (?)", (event,))
        conn.execute("COMMIT")

    def create() -> None:
        for i in range(OBJECTS):
            body = json.dumps(pod(i))
            write("INSERT INTO objects VALUES (?, ?, ?)", (f"web-{i}", f"group-{i % GROUPS}",
                                                          body), body)

    def get() -> None:
        for i in range(OBJECTS):
            row = conn.execute("SELECT body FROM objects WHERE name = ?", (f"web-{i}",))
            json.loads(row.fetchone()[0])

    def list_label() -> None:
        for n in range(LISTS):
            rows = conn.execute("SELECT body FROM objects WHERE app = ?", (f"group-{n % GROUPS}",))
            [json.loads(r[0]) for r in rows]

    def update() -> None:
        for i in range(OBJECTS):
            body = json.dumps(pod(i, "web:2"))
            write("UPDATE objects SET body = ? WHERE name = ?", (body, f"web-{i}"), body)

    def watch() -> None:
        [json.loads(r[0]) for r in conn.execute("SELECT body FROM events ORDER BY rv")]

    results = dict([
        timed("create", OBJECTS, create),
        timed("get", OBJECTS, get),
        timed("list-label", LISTS, list_label),
        timed("apply-update", OBJECTS, update),
        timed("watch", 2 * OBJECTS, watch),
    ])
    conn.close()
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = run_raw(Path(tmp) / "raw.db")
        store = run_store(Path(tmp) / "store.db")
    print(f"{OBJECTS} Pods (~0.6 KB JSON each); list-label returns {OBJECTS // GROUPS} per call")
    print(f"{'operation':<14}{'store ops/s':>14}{'raw ops/s':>14}{'slower by':>12}")
    for label, rate in store.items():
        print(f"{label:<14}{rate:>14,.0f}{raw[label]:>14,.0f}{raw[label] / rate:>11.1f}x")


if __name__ == "__main__":
    main()
