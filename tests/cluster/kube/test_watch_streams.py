"""One long-lived watch per kind: polls of a quiet kind cost no request, others' writes
arrive through the open stream, a stream the server ends resumes from its last version with
bookmarks asked for, and a version the server forgot makes the stream start again from a
fresh list while callers from before it get `410` and list again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cluster.contract.workers import open_kube
from headway.clock import SystemClock
from headway.cluster.errors import Gone
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.streams import KindStream
from headway.cluster.kube.transport import Transport
from headway.cluster.local.api.store import LocalCluster
from headway.controllers.app.live import LiveReader
from polling import wait_for


def _url(config: Path) -> str:
    return next(line.split()[-1] for line in config.read_text().splitlines() if "server:" in line)


def _config_map(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"k": name}}


@pytest.fixture
def counted(api: tuple[Path, Path]) -> Iterator[tuple[KubeCluster, list[httpx2.Request]]]:
    """A backend whose every request is recorded."""
    seen: list[httpx2.Request] = []
    client = httpx2.Client(base_url=_url(api[0]), timeout=30.0,
                           event_hooks={"request": [seen.append]})
    with KubeCluster(Transport(client)) as cluster:
        yield cluster, seen


def _watches(seen: list[httpx2.Request]) -> list[dict[str, str]]:
    return [dict(r.url.params) for r in seen if r.url.params.get("watch") == "true"]


def test_polling_a_quiet_kind_costs_no_request_once_its_stream_is_open(
    counted: tuple[KubeCluster, list[httpx2.Request]]
) -> None:
    cluster, seen = counted
    version = cluster.apply(_config_map("a"), field_manager="test")["metadata"][
        "resourceVersion"]
    assert list(cluster.watch("v1", "Secret", resource_version=version)) == []  # opens it
    wait_for(lambda: _watches(seen), timeout=30, what="the Secret stream opened")
    (opened,) = _watches(seen)
    assert (opened["resourceVersion"], opened["allowWatchBookmarks"]) == (version, "true")
    seen.clear()
    for _ in range(20):
        assert list(cluster.watch("v1", "Secret", resource_version=version)) == []
    assert seen == []


def test_writes_by_another_client_arrive_through_the_open_stream(
    api: tuple[Path, Path], counted: tuple[KubeCluster, list[httpx2.Request]]
) -> None:
    cluster, _ = counted
    version = cluster.apply(_config_map("a"), field_manager="test")["metadata"][
        "resourceVersion"]
    list(cluster.watch("v1", "ConfigMap", resource_version=version))
    with open_kube(_url(api[0])) as other:
        other.apply(_config_map("from-other"), field_manager="other")

    def names() -> list[str]:
        events = cluster.watch("v1", "ConfigMap", resource_version=version)
        return [e.object["metadata"]["name"] for e in events]

    assert wait_for(lambda: names() == ["from-other"], timeout=30, what="the other write")


def test_a_stream_the_server_ends_resumes_from_its_last_version(
    api: tuple[Path, Path], counted: tuple[KubeCluster, list[httpx2.Request]]
) -> None:
    cluster, seen = counted
    start = cluster.apply(_config_map("a"), field_manager="test")["metadata"]["resourceVersion"]
    served = cluster.kinds.find("v1", "ConfigMap")
    stream = KindStream(cluster.transport, served, "default", start, open_seconds=1)
    try:
        first = cluster.apply(_config_map("b"), field_manager="test")
        wait_for(lambda: stream.position == first["metadata"]["resourceVersion"], timeout=30,
                 what="the first event")
        wait_for(lambda: len(_watches(seen)) >= 2, timeout=30, what="the server ending it")
        second = cluster.apply(_config_map("c"), field_manager="test")
        wait_for(lambda: stream.position == second["metadata"]["resourceVersion"], timeout=30,
                 what="the event after the reopening")
        events = stream.since(start)
        assert events is not None
        assert [e.object["metadata"]["name"] for e in events] == ["b", "c"]  # once each
        reopened = _watches(seen)[1]
        assert reopened["resourceVersion"] == first["metadata"]["resourceVersion"]
        assert reopened["allowWatchBookmarks"] == "true"
    finally:
        stream.close()


def test_a_forgotten_version_relists_and_callers_from_before_list_again(
    api: tuple[Path, Path], counted: tuple[KubeCluster, list[httpx2.Request]]
) -> None:
    config, db = api
    cluster, _ = counted
    old = cluster.apply(_config_map("a"), field_manager="test")["metadata"]["resourceVersion"]
    served = cluster.kinds.find("v1", "ConfigMap")
    stream = KindStream(cluster.transport, served, "quiet", old, open_seconds=1)
    try:
        for name in ("b", "c"):  # the global version moves on; nothing in `quiet`
            cluster.apply(_config_map(name), field_manager="test")
        with LocalCluster(db, SystemClock()) as store:
            store.compact(keep=0)
        wait_for(lambda: stream.relists == 1, timeout=30, what="the stream relisting")
        assert stream.since(old) is None  # it cannot say what happened before the relist
        assert stream.start != old
    finally:
        stream.close()
    with open_kube(_url(config)) as fresh, pytest.raises(Gone):
        list(fresh.watch("v1", "ConfigMap", namespace="quiet", resource_version=old))


def _tracked(name: str, app: str) -> dict[str, Any]:
    cm = _config_map(name)
    cm["metadata"]["labels"] = {"app.kubernetes.io/instance": app}
    return cm


def _lists(seen: list[httpx2.Request]) -> list[str]:
    return [r.url.path for r in seen if r.method == "GET" and "watch" not in r.url.params
            and r.url.params.get("labelSelector")]


def test_apps_live_objects_come_from_the_watched_objects_not_a_list_per_app_and_kind(
    api: tuple[Path, Path], counted: tuple[KubeCluster, list[httpx2.Request]]
) -> None:
    cluster, seen = counted
    cluster.apply(_tracked("one-a", "one"), field_manager="test")
    cluster.apply(_tracked("two-a", "two"), field_manager="test")
    reader = LiveReader(cluster)
    assert [k.name for k in reader.managed("one", [])] == ["one-a"]
    kinds = len(reader.kinds())
    assert len(_lists(seen)) == kinds  # each kind listed once, for every app
    seen.clear()
    assert [k.name for k in reader.managed("two", [])] == ["two-a"]
    assert _lists(seen) == []
    with open_kube(_url(api[0])) as other:
        other.apply(_tracked("two-b", "two"), field_manager="other")
        other.delete("v1", "ConfigMap", "two-a", "default")

    def names() -> list[str]:
        return sorted(k.name for k in reader.managed("two", []))

    assert wait_for(lambda: names() == ["two-b"], timeout=30, what="the other client's writes")
    untracked = cluster.get("v1", "ConfigMap", "one-a", "default")
    untracked["metadata"]["labels"] = {}
    cluster.update(untracked, field_manager="test")  # our own write: seen at once
    assert reader.managed("one", []) == {}
    assert _lists(seen) == []


def test_more_open_streams_than_httpx_pools_by_default_do_not_starve_requests(
    api: tuple[Path, Path]
) -> None:
    config, _ = api
    with KubeCluster.connect(config) as cluster:
        version = cluster.apply(_config_map("a"), field_manager="test")["metadata"][
            "resourceVersion"]
        served = cluster.kinds.find("v1", "ConfigMap")
        assert cluster.streams is not None
        for n in range(110):  # a cluster serving 110 kinds: a stream each
            cluster.streams.follow_from(served, f"ns-{n}", version)
        streams = cluster.streams
        wait_for(lambda: streams.connected() == 110, timeout=60, what="110 open streams")
        assert cluster.get("v1", "ConfigMap", "a", "default")["data"] == {"k": "a"}
