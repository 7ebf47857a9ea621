"""List pagination (`limit`/`continue`) and delete preconditions of the local store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.contract.objects import configmap
from headway.clock import VirtualClock
from headway.cluster.errors import AlreadyExists, Conflict, Expired, Invalid
from headway.cluster.local import LocalCluster


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "store.db", clock) as cluster:
        yield cluster


def _names(items: list[dict[str, object]]) -> list[str]:
    return [str(o["metadata"]["name"]) for o in items]  # type: ignore[index]


def test_pages_follow_continue_tokens_to_every_object_once(store: LocalCluster) -> None:
    for n in range(7):
        store.create(configmap(f"cm{n}"))
    seen: list[str] = []
    page = store.list_page("v1", "ConfigMap", limit=3)
    first_rv = page.resource_version
    pages = 1
    while page.continue_token:
        seen += _names(page.items)
        assert page.remaining == 7 - len(seen)
        page = store.list_page("v1", "ConfigMap", limit=3, continue_token=page.continue_token)
        assert page.resource_version == first_rv  # every page names the first page's version
        pages += 1
    seen += _names(page.items)
    assert pages == 3
    assert seen == [f"cm{n}" for n in range(7)]
    assert page.remaining is None


def test_a_label_selector_applies_before_the_limit(store: LocalCluster) -> None:
    for n in range(6):
        cm = configmap(f"cm{n}")
        cm["metadata"]["labels"] = {"parity": "even" if n % 2 == 0 else "odd"}
        store.create(cm)
    page = store.list_page("v1", "ConfigMap", label_selector="parity=odd", limit=2)
    assert _names(page.items) == ["cm1", "cm3"]
    rest = store.list_page("v1", "ConfigMap", label_selector="parity=odd", limit=2,
                           continue_token=page.continue_token)
    assert _names(rest.items) == ["cm5"] and rest.continue_token == ""


def test_a_token_older_than_the_history_is_expired(store: LocalCluster) -> None:
    for n in range(4):
        store.create(configmap(f"cm{n}"))
    page = store.list_page("v1", "ConfigMap", limit=2)
    store.create(configmap("later"))
    store.compact(keep=0)
    with pytest.raises(Expired, match="continue token is too old"):
        store.list_page("v1", "ConfigMap", limit=2, continue_token=page.continue_token)


def test_a_forged_token_is_invalid(store: LocalCluster) -> None:
    with pytest.raises(Invalid, match="continue token"):
        store.list_page("v1", "ConfigMap", limit=2, continue_token="not-a-token")


def test_create_of_an_existing_name_is_already_exists(store: LocalCluster) -> None:
    store.create(configmap("a"))
    with pytest.raises(AlreadyExists):
        store.create(configmap("a"))


def test_delete_preconditions_refuse_a_changed_object(store: LocalCluster) -> None:
    created = store.create(configmap("a"))
    stale = created["metadata"]["resourceVersion"]
    store.update(dict(configmap("a"), data={"k": "changed"}))
    with pytest.raises(Conflict, match="stale"):
        store.delete("v1", "ConfigMap", "a", "default", resource_version=stale)
    with pytest.raises(Conflict, match="uid precondition"):
        store.delete("v1", "ConfigMap", "a", "default", uid="other")
    store.delete("v1", "ConfigMap", "a", "default", uid=created["metadata"]["uid"])
    assert store.list("v1", "ConfigMap") == []


def test_a_snapshot_the_history_cannot_rebuild_is_expired(store: LocalCluster) -> None:
    # Local-only: etcd keeps every revision a continue token names until it compacts that
    # revision; this store keeps the log since its last compaction, so an object last written
    # before a compaction and changed after the first page cannot be shown as it was.
    for n in range(3):
        store.create(configmap(f"cm{n}"))
    store.compact(keep=0)
    page = store.list_page("v1", "ConfigMap", limit=1)
    store.update(dict(configmap("cm2"), data={"k": "changed"}))
    with pytest.raises(Expired, match="cm2"):
        store.list_page("v1", "ConfigMap", limit=1, continue_token=page.continue_token)
