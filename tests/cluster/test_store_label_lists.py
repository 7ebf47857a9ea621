"""A list narrowed by a label starts from the labels index, not from every object of the kind.

The Application controller lists each kind by its tracking label once per app; scanning the
kind instead made one app's read cost the size of the whole fleet (bench/bench_scale.py).
No time is measured: SQLite's query plan says which index drives the query.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
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


def test_every_kinds_labelled_objects_come_from_one_query_on_the_labels_index(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(":memory:")
    conn.executescript(database._SCHEMA)
    steps = " / ".join(str(row[3]) for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT o.body FROM labels AS l JOIN objects AS o ON o.uid = l.uid"
        " WHERE l.key = ? AND l.value = ?", ("app", "shop")))
    assert steps.startswith("SEARCH l USING") and "labels_by_pair" in steps

    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    for kind, api in (("ConfigMap", "v1"), ("Secret", "v1"), ("Deployment", "apps/v1")):
        for app in ("shop", "cart"):
            obj: dict[str, Any] = {"apiVersion": api, "kind": kind,
                                   "metadata": {"name": f"{app}-{kind.lower()}",
                                                "labels": {"app": app}}}
            if kind == "Deployment":
                obj["spec"] = {"selector": {"matchLabels": {"app": app}}, "template": {
                    "metadata": {"labels": {"app": app}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}
            store.create(obj)
    found = [(o["apiVersion"], o["kind"], o["metadata"]["name"])
             for o in store.labelled("app", "shop")]
    assert found == [("v1", "ConfigMap", "shop-configmap"), ("v1", "Secret", "shop-secret"),
                     ("apps/v1", "Deployment", "shop-deployment")]  # by group, kind, name
