"""Watch over HTTP: events after a resourceVersion, bookmarks to resume from, and the
410 ERROR event for a version older than the history."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import httpx2

from kubeapi.conftest import Api
from kubeapi.objects import configmap

CM = "/api/v1/namespaces/default/configmaps"


def _watch(api: Api, **params: Any) -> list[dict[str, Any]]:
    """Every event of a watch that ends by its own timeoutSeconds."""
    query = {"watch": "1", "timeoutSeconds": "1", **params}
    with httpx2.stream("GET", f"{api.url}{CM}", params=query, timeout=30) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        return [json.loads(line) for line in response.iter_lines() if line.strip()]


def _list_version(api: Api) -> str:
    body = httpx2.get(f"{api.url}{CM}").json()
    return str(body["metadata"]["resourceVersion"])


def _seen(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"]["name"]) for e in events
            if e["type"] != "BOOKMARK"]


def test_a_watch_from_a_list_version_sees_only_later_changes(api: Api) -> None:
    api.store.create(configmap("before"))
    version = _list_version(api)
    api.store.create(configmap("after"))
    api.store.update(configmap("after", k="v"))
    api.store.delete("v1", "ConfigMap", "after", "default")
    events = _watch(api, resourceVersion=version)
    assert _seen(events) == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "after")]


def test_a_watch_without_a_version_starts_with_every_object_as_added(api: Api) -> None:
    api.store.create(configmap("one"))
    api.store.create(configmap("two"))
    assert _seen(_watch(api)) == [("ADDED", "one"), ("ADDED", "two")]


def test_a_label_selector_filters_watch_events(api: Api) -> None:
    version = _list_version(api)
    api.store.create(configmap("web", labels={"tier": "web"}))
    api.store.create(configmap("db", labels={"tier": "db"}))
    assert _seen(_watch(api, resourceVersion=version, labelSelector="tier=db")) == [
        ("ADDED", "db")]


def test_a_bookmark_names_a_version_to_resume_from_without_missing_or_repeating(
    api: Api,
) -> None:
    version = _list_version(api)
    api.store.create(configmap("first"))
    events = _watch(api, resourceVersion=version, allowWatchBookmarks="true")
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, "no bookmark within the watch"
    assert bookmarks[-1]["object"]["kind"] == "ConfigMap"
    resume = bookmarks[-1]["object"]["metadata"]["resourceVersion"]
    api.store.create(configmap("second"))
    assert _seen(_watch(api, resourceVersion=resume)) == [("ADDED", "second")]


def test_bookmarks_are_sent_only_when_asked_for(api: Api) -> None:
    events = _watch(api, resourceVersion=_list_version(api))
    assert [e for e in events if e["type"] == "BOOKMARK"] == []


def test_a_compacted_version_ends_the_watch_with_a_410_error_event(api: Api) -> None:
    api.store.create(configmap("start"))  # a non-zero version ("0" means "from now")
    version = _list_version(api)
    for n in range(3):
        api.store.create(configmap(f"cm{n}"))
    api.store.compact(keep=1)
    events = _watch(api, resourceVersion=version)
    assert [e["type"] for e in events] == ["ERROR"]
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")


def test_send_initial_events_ends_them_with_an_annotated_bookmark(api: Api) -> None:
    api.store.create(configmap("existing"))
    events = _watch(api, sendInitialEvents="true", allowWatchBookmarks="true",
                    resourceVersionMatch="NotOlderThan")
    assert events[0]["type"] == "ADDED"
    end = events[1]
    assert end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_many_idle_watches_leave_the_server_answering(api: Api) -> None:
    """More open watches than the server has worker threads (40): an idle watch must hold
    none, or k9s or a controller watching every kind would stall every other request."""
    limits = httpx2.Limits(max_connections=200, max_keepalive_connections=0)
    async with httpx2.AsyncClient(base_url=api.url, timeout=20, limits=limits) as client, \
            contextlib.AsyncExitStack() as watches:
        for _ in range(60):
            response = await watches.enter_async_context(client.stream(
                "GET", CM, params={"watch": "1", "timeoutSeconds": "60",
                                   "resourceVersion": _list_version(api)}))
            assert response.status_code == 200
        answer = await client.get(CM)
        assert answer.status_code == 200


def _relabel(api: Api, name: str, tier: str) -> None:
    api.store.update(configmap(name, labels={"tier": tier}))


def test_an_object_leaving_or_entering_a_selector_is_deleted_or_added(api: Api) -> None:
    api.store.create(configmap("moving", labels={"tier": "web"}))
    api.store.create(configmap("other", labels={"tier": "db"}))
    # From the list: "moving" is held by the client, "other" is not.
    first = _watch(api, labelSelector="tier=web")
    assert _seen(first) == [("ADDED", "moving")]
    version = _list_version(api)
    _relabel(api, "moving", "db")   # leaves the selection
    _relabel(api, "other", "web")   # enters it
    _relabel(api, "other", "web2")  # leaves it again
    api.store.delete("v1", "ConfigMap", "moving", "default")  # not held any more: unseen
    # Resumed from a version: what matched then comes from the store's snapshot.
    assert _seen(_watch(api, resourceVersion=version, labelSelector="tier=web")) == [
        ("DELETED", "moving"), ("ADDED", "other"), ("DELETED", "other")]


def test_a_field_selector_watch_sees_the_object_it_names_leave(api: Api) -> None:
    api.store.create(configmap("named"))
    version = _list_version(api)
    api.store.update(configmap("named", k="v"))
    api.store.delete("v1", "ConfigMap", "named", "default")
    events = _watch(api, resourceVersion=version, fieldSelector="metadata.name=named")
    assert _seen(events) == [("MODIFIED", "named"), ("DELETED", "named")]
