"""A list narrowed by a label starts from the labels index, not from every object of the kind.

The Application controller lists each kind by its tracking label once per app; scanning the
kind instead made one app's read cost the size of the whole fleet (bench/bench_scale.py).
No time is measured: SQLite's query plan says which index drives the query.
"""

from __future__ import annotations

import sqlite3

from headway.cluster.local.api import database


def plan(equalities: dict[str, str], namespace: str | None) -> str:
    conn = sqlite3.connect(":memory:")
    conn.executescript(database._SCHEMA)
    where, params = database._object_filter(  # the filter `select` and `count` share
        "", "ConfigMap", namespace=namespace, equalities=equalities, after=None, max_revision=None
    )
    rows = conn.execute(f"EXPLAIN QUERY PLAN SELECT body FROM objects WHERE {where}", params)
    return " / ".join(str(row[3]) for row in rows)


def test_a_labelled_list_is_driven_by_the_labels_index() -> None:
    for namespace in (None, "demo"):
        steps = plan({"app.kubernetes.io/instance": "shop"}, namespace)
        assert steps.startswith("SEARCH objects USING INDEX") and "(uid=?)" in steps.split(" / ")[0]
        assert "labels_by_pair" in steps


def test_an_unlabelled_list_uses_the_kind_index() -> None:
    assert "(grp=? AND kind=?" in plan({}, None)
