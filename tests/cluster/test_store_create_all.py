"""`LocalCluster.create_all`: many creates in one transaction, all of them or none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.errors import AlreadyExists, NamespaceNotFound
from headway.cluster.local import LocalCluster


def config_map(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"k": name}}


def names(store: LocalCluster) -> list[str]:
    return [o["metadata"]["name"] for o in store.list("v1", "ConfigMap", namespace="default")]


def test_every_object_is_created_as_create_would(tmp_path: Path) -> None:
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    store.create(config_map("one-by-one"), field_manager="seed")

    created = store.create_all((config_map(f"cm-{i}") for i in range(3)), field_manager="seed")

    assert created == 3
    assert names(store) == ["cm-0", "cm-1", "cm-2", "one-by-one"]
    single = store.get("v1", "ConfigMap", "one-by-one", "default")["metadata"]
    bulk = store.get("v1", "ConfigMap", "cm-2", "default")["metadata"]
    assert bulk["managedFields"][0]["manager"] == single["managedFields"][0]["manager"]
    assert int(bulk["resourceVersion"]) > int(single["resourceVersion"])
    assert bulk["generation"] == 1 and bulk["uid"] != single["uid"]


@pytest.mark.parametrize(
    ("refused", "error"),
    [(config_map("cm-0"), AlreadyExists), (config_map("x", namespace="absent"), NamespaceNotFound)],
)
def test_a_refused_object_creates_none_of_them(
    tmp_path: Path, refused: dict[str, Any], error: type[Exception]
) -> None:
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    revision = store.list_with_revision("v1", "ConfigMap")[1]

    with pytest.raises(error):
        store.create_all([config_map("cm-0"), config_map("cm-1"), refused])

    assert names(store) == []
    assert store.list_with_revision("v1", "ConfigMap")[1] == revision
