"""The Kubernetes backend against recorded (today: hand-written, "unverified") API answers:
each error a real API server gives becomes the protocol's error, 429 is retried as the
server asks, and watches ask for bookmarks and resume from them."""

from __future__ import annotations

import itertools
import json

import httpx2
import pytest

from cluster.kube.replay import FIXTURES, load, replayed
from headway.cluster.errors import (
    Expired,
    FieldConflict,
    Forbidden,
    Gone,
    Invalid,
    StaleVersion,
    Throttled,
)
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import RetryPolicy, Transport
from headway.cluster.protocol import WatchEventType

DISCOVERY = {**load("discovery.json")["documents"]}
DISCOVERY["/api/v1"] = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
    {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
    {"name": "pods/log", "namespaced": True, "kind": "Pod", "verbs": ["get"]}]}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "prod"}, "spec": {"replicas": 3}}


def test_every_fixture_says_where_it_comes_from() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        provenance = json.loads(path.read_text())["provenance"]
        assert provenance["source"] in ("recorded", "unverified"), path.name
        if provenance["source"] == "recorded":
            assert provenance["kubernetes"] and provenance["command"], path.name
        else:
            assert provenance["reference"], path.name


def test_a_409_with_field_manager_causes_is_a_field_conflict() -> None:
    cluster, _ = replayed("409-apply-field-conflict.json")
    with pytest.raises(FieldConflict) as caught:
        cluster.apply(DEPLOYMENT, field_manager="headway")
    assert caught.value.conflicts == [
        (".spec.replicas", "kubectl-edit"),
        ('.spec.template.spec.containers[name="web"].image', "hpa-controller"),
    ]


def test_a_409_without_causes_is_a_stale_version_conflict() -> None:
    cluster, _ = replayed("409-update-stale.json")
    stale = {**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "resourceVersion": "9"}}
    with pytest.raises(StaleVersion, match="has been modified"):
        cluster.update(stale, field_manager="headway")


def test_an_error_event_in_a_watch_stream_is_expired_after_the_events_before_it() -> None:
    cluster, _ = replayed("410-watch-stream.json")
    watch = cluster.watch("apps/v1", "Deployment", namespace="prod", resource_version="1200",
                          timeout_seconds=60)
    first = next(watch)
    assert (first.type, first.resource_version) == (WatchEventType.MODIFIED, "1201")
    with pytest.raises(Expired, match="too old resource version"):
        next(watch)


def test_an_expired_continue_token_is_gone() -> None:
    cluster, _ = replayed("410-list-continue.json")
    token = load("410-list-continue.json")["exchanges"][0]["request"]["query"]["continue"]
    with pytest.raises(Gone):
        cluster.list_page("apps/v1", "Deployment", namespace="prod", limit=1,
                          continue_token=token)


def test_a_422_is_invalid_with_the_servers_field_message() -> None:
    cluster, _ = replayed("422-invalid.json")
    with pytest.raises(Invalid, match=r"spec.replicas: Invalid value: -1"):
        cluster.apply({**DEPLOYMENT, "spec": {"replicas": -1}}, field_manager="headway")


def test_field_validation_is_sent_when_asked_for_and_only_then() -> None:
    cluster, replay = replayed("422-invalid.json")
    with pytest.raises(Invalid):
        cluster.apply({**DEPLOYMENT, "spec": {"replicas": -1}}, field_manager="headway",
                      field_validation="Strict")
    assert replay.seen[0].url.params["fieldValidation"] == "Strict"
    cluster, replay = replayed("422-invalid.json")
    with pytest.raises(Invalid):
        cluster.apply({**DEPLOYMENT, "spec": {"replicas": -1}}, field_manager="headway")
    assert "fieldValidation" not in replay.seen[0].url.params


def test_a_403_is_forbidden_naming_the_object_and_the_missing_permission() -> None:
    cluster, _ = replayed("403-forbidden.json")
    with pytest.raises(Forbidden) as caught:
        cluster.get("apps/v1", "Deployment", "web", "prod")
    assert str(caught.value).startswith("Deployment prod/web: ")
    assert 'cannot get resource "deployments"' in str(caught.value)


def test_a_429_is_retried_after_the_wait_the_server_names() -> None:
    sleeps: list[float] = []
    cluster, replay = replayed("429-then-ok.json", sleeps=sleeps)
    assert cluster.get("v1", "ConfigMap", "settings", "prod")["data"] == {"mode": "on"}
    assert sleeps == [3.0, 1.0]
    assert len(replay.seen) == 3


def test_retries_of_a_429_are_bounded_and_each_wait_capped() -> None:
    sleeps: list[float] = []
    cluster, replay = replayed("429-then-ok.json", sleeps=sleeps,
                               retry=RetryPolicy(attempts=2, max_wait=2.0))
    with pytest.raises(Throttled, match="ConfigMap prod/settings"):
        cluster.get("v1", "ConfigMap", "settings", "prod")
    assert sleeps == [2.0]  # the server's 3 s, capped; no wait after the last attempt
    assert len(replay.seen) == 2


def test_a_watch_asks_for_bookmarks_and_resumes_from_the_last_one() -> None:
    cluster, replay = replayed("watch-bookmark-resume.json")
    watch = cluster.watch("apps/v1", "Deployment", namespace="prod", resource_version="500",
                          timeout_seconds=3600)
    events = list(itertools.islice(watch, 2))
    assert [(e.type, e.resource_version) for e in events] == [
        (WatchEventType.ADDED, "510"), (WatchEventType.DELETED, "655")]
    assert [r.url.params["resourceVersion"] for r in replay.seen] == ["500", "640"]
    assert not replay.exchanges  # the second stream was opened from the bookmark's version


def test_a_pods_log_is_read_from_the_log_subresource_as_text() -> None:
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path in DISCOVERY:
            return httpx2.Response(200, json=DISCOVERY[request.url.path])
        seen.append(request)
        return httpx2.Response(200, text="line 1\nline 2\n")

    client = httpx2.Client(transport=httpx2.MockTransport(answer), base_url="https://k:6443")
    with KubeCluster(Transport(client)) as cluster:
        text = cluster.pod_log("web-1", "prod", container="app", previous=True)
    assert text == "line 1\nline 2\n"
    (request,) = seen
    assert request.url.path == "/api/v1/namespaces/prod/pods/web-1/log"
    assert dict(request.url.params) == {"container": "app", "previous": "true"}
