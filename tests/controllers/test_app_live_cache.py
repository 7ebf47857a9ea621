"""The live reader reuses an app's answer until an object it could include changes.

One commit to one app of a large fleet writes every app's status; if each of those writes made
every other app list every kind again, the cost of one change would grow with the fleet
(bench/bench_scale.py). The answer must still follow every change to the app's own objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import CountingLists

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.live import LiveReader
from headway.sync.comparison import prepare_desired
from headway.sync.resources import key_of


def config_map(name: str, value: str = "1", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "demo", "labels": labels}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": value}}


@pytest.fixture
def store(tmp_path: Path) -> LocalCluster:
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    store.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
        field_manager="test",
    )
    return store


def deploy(store: LocalCluster, app: str, *objects: dict[str, Any]) -> list[dict[str, Any]]:
    desired = prepare_desired(list(objects), app=app, namespace="demo")
    for obj in desired:
        store.apply(obj, field_manager="test")
    return desired


def test_other_apps_writes_leave_the_answer_in_place(store: LocalCluster) -> None:
    counting = CountingLists(store)
    reader = LiveReader(counting)
    desired = deploy(store, "a", config_map("a-settings"))
    deploy(store, "b", config_map("b-settings"))
    reader.managed("a", desired)
    listed = counting.lists

    deploy(store, "b", config_map("b-settings", "2"))
    again = reader.managed("a", desired)

    assert counting.lists == listed
    assert [o["data"] for o in again.values()] == [{"v": "1"}]


def test_a_change_to_the_apps_own_object_is_read(store: LocalCluster) -> None:
    reader = LiveReader(store)
    desired = deploy(store, "a", config_map("a-settings"), config_map("a-extra"))
    reader.managed("a", desired)

    deploy(store, "a", config_map("a-settings", "2"), config_map("a-extra"))
    changed = reader.managed("a", desired)
    store.delete("v1", "ConfigMap", "a-extra", "demo")
    deleted = reader.managed("a", desired)

    key = key_of(desired[0])
    assert changed[key]["data"] == {"v": "2"}
    assert key_of(desired[1]) not in deleted


def test_an_unlabelled_object_under_a_desired_key_is_followed_too(store: LocalCluster) -> None:
    # Adoption: the object exists without the app's label, so the label cannot tell when it
    # changes; the reader falls back to the store's revision for this app.
    reader = LiveReader(store)
    store.apply(config_map("a-settings"), field_manager="someone")
    desired = prepare_desired([config_map("a-settings")], app="a", namespace="demo")
    reader.managed("a", desired)

    store.apply(config_map("a-settings", "2"), field_manager="someone")
    found = reader.managed("a", desired)

    assert found[key_of(desired[0])]["data"] == {"v": "2"}
