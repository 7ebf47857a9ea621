"""List pagination (`limit` + `continue`) and watch resume with `Gone` -> relist."""

from __future__ import annotations

import pytest

from cluster.contract.conftest import ClusterFactory
from cluster.contract.objects import configmap
from headway.cluster.errors import Expired, Gone, Invalid
from headway.cluster.protocol import Cluster, WatchEventType
from headway.model.obj import Obj


def _names(items: list[Obj]) -> list[str]:
    return [o["metadata"]["name"] for o in items]


def _create(cluster: Cluster, *names: str, labels: dict[str, str] | None = None) -> None:
    for name in names:
        cluster.apply(configmap(name, labels=labels or {}), field_manager="test")


def test_pages_hand_out_every_object_once_in_order(cluster: Cluster) -> None:
    _create(cluster, "e", "a", "d", "b", "c")
    first = cluster.list_page("v1", "ConfigMap", limit=2)
    assert _names(first.items) == ["a", "b"]
    assert first.continue_token and first.remaining == 3
    second = cluster.list_page("v1", "ConfigMap", limit=2, continue_token=first.continue_token)
    third = cluster.list_page("v1", "ConfigMap", limit=2, continue_token=second.continue_token)
    assert _names(second.items) == ["c", "d"]
    assert _names(third.items) == ["e"]
    assert third.continue_token == ""
    assert {second.resource_version, third.resource_version} == {first.resource_version}


def test_without_a_limit_one_page_holds_everything(cluster: Cluster) -> None:
    _create(cluster, "a", "b", "c")
    page = cluster.list_page("v1", "ConfigMap")
    assert _names(page.items) == ["a", "b", "c"]
    assert page.continue_token == ""


def test_the_selector_and_namespace_narrow_before_the_limit(cluster: Cluster) -> None:
    _create(cluster, "a", "c", labels={"tier": "web"})
    _create(cluster, "b", labels={"tier": "db"})
    page = cluster.list_page("v1", "ConfigMap", namespace="default",
                             label_selector="tier=web", limit=1)
    rest = cluster.list_page("v1", "ConfigMap", namespace="default",
                             label_selector="tier=web", limit=1,
                             continue_token=page.continue_token)
    assert (_names(page.items), _names(rest.items)) == (["a"], ["c"])


def test_a_token_from_before_the_history_is_gone(factory: ClusterFactory) -> None:
    cluster = factory.open()
    _create(cluster, "a", "b", "c")
    page = cluster.list_page("v1", "ConfigMap", limit=1)
    _create(cluster, "d")  # the history moves past the first page's version
    factory.forget_history()
    with pytest.raises(Gone):
        cluster.list_page("v1", "ConfigMap", limit=1, continue_token=page.continue_token)
    restarted = cluster.list_page("v1", "ConfigMap")  # the caller's answer: start again
    assert _names(restarted.items) == ["a", "b", "c", "d"]


def test_a_token_that_is_not_one_is_invalid(cluster: Cluster) -> None:
    with pytest.raises(Invalid, match="continue token"):
        cluster.list_page("v1", "ConfigMap", limit=1, continue_token="made-up")


def test_a_watch_from_the_lists_version_misses_nothing(cluster: Cluster) -> None:
    _create(cluster, "a")
    listed = cluster.list_page("v1", "ConfigMap")
    _create(cluster, "b")
    events = list(cluster.watch("v1", "ConfigMap", resource_version=listed.resource_version))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        (WatchEventType.ADDED, "b")
    ]


def test_a_watch_from_a_forgotten_version_is_gone_and_a_relist_resumes(
    factory: ClusterFactory,
) -> None:
    cluster = factory.open()
    _create(cluster, "a")
    old = cluster.list_page("v1", "ConfigMap").resource_version
    _create(cluster, "b")
    cluster.delete("v1", "ConfigMap", "a")
    factory.forget_history()
    with pytest.raises(Gone) as raised:
        list(cluster.watch("v1", "ConfigMap", resource_version=old))
    assert isinstance(raised.value, Expired)  # the API server's reason for a compacted version
    relisted = cluster.list_page("v1", "ConfigMap")
    assert _names(relisted.items) == ["b"]  # the deletion the watch missed shows in the list
    _create(cluster, "c")
    events = list(cluster.watch("v1", "ConfigMap", resource_version=relisted.resource_version))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        (WatchEventType.ADDED, "c")
    ]


def test_later_pages_show_the_first_pages_snapshot(cluster: Cluster) -> None:
    _create(cluster, "a", "b", "c", "d", "e")
    cluster.apply(configmap("c", {"v": "old"}), field_manager="test")
    first = cluster.list_page("v1", "ConfigMap", limit=2)
    cluster.delete("v1", "ConfigMap", "d")  # deleted after the snapshot: still listed
    cluster.apply(configmap("c", {"v": "new"}), field_manager="test")  # changed: as it was
    _create(cluster, "cc")  # created after the snapshot: not listed
    cluster.delete("v1", "ConfigMap", "e")
    _create(cluster, "e")  # deleted and created again: the old one is listed
    second = cluster.list_page("v1", "ConfigMap", limit=2, continue_token=first.continue_token)
    assert _names(second.items) == ["c", "d"]
    assert second.items[0]["data"] == {"v": "old"}
    assert second.remaining == 1
    last = cluster.list_page("v1", "ConfigMap", limit=2, continue_token=second.continue_token)
    assert _names(last.items) == ["e"]
    assert last.remaining is None and last.continue_token == ""
    assert all(int(o["metadata"]["resourceVersion"]) <= int(first.resource_version)
               for o in [*second.items, *last.items])


def test_a_snapshot_narrows_by_the_labels_objects_had_then(cluster: Cluster) -> None:
    _create(cluster, "a", "b", "c", labels={"tier": "web"})
    first = cluster.list_page("v1", "ConfigMap", label_selector="tier=web", limit=1)
    cluster.apply(configmap("b", labels={"tier": "db"}), field_manager="test")
    cluster.apply(configmap("c", {"k": "v"}, labels={"tier": "web"}), field_manager="test")
    rest = cluster.list_page("v1", "ConfigMap", label_selector="tier=web", limit=5,
                             continue_token=first.continue_token)
    assert _names(rest.items) == ["b", "c"]


def test_a_set_based_selector_pages_the_same_way(cluster: Cluster) -> None:
    _create(cluster, "a", "c", "e", labels={"tier": "web"})
    _create(cluster, "b", "d", labels={"tier": "db"})
    first = cluster.list_page("v1", "ConfigMap", label_selector="tier!=db", limit=2)
    rest = cluster.list_page("v1", "ConfigMap", label_selector="tier!=db", limit=2,
                             continue_token=first.continue_token)
    assert (_names(first.items), first.remaining) == (["a", "c"], 1)
    assert (_names(rest.items), rest.continue_token) == (["e"], "")
