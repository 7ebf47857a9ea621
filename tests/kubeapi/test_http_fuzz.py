"""Any request, however malformed, gets a JSON answer and never a 500: every failure is a
`Status` a client can act on (generated requests against the app, in process)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import build_app
from kubeapi.objects import configmap, deployment, widget_crd

_PREFIXES = ["/api/v1", "/apis/apps/v1", "/apis/example.com/v1", "/apis/nope/v9", "/api/v2"]
_PLURALS = ["configmaps", "deployments", "widgets", "pods", "namespaces", "events", "bogus"]
_NAMES = ["web", "c", "w", "missing", "x" * 300, "a/b", ""]
_SUBRESOURCES = ["", "status", "scale", "log", "nonsense"]
_CONTENT_TYPES = [
    "application/json", "application/merge-patch+json", "application/json-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf", "text/plain",
]
_QUERY_KEYS = ["watch", "limit", "continue", "labelSelector", "fieldSelector",
               "resourceVersion", "timeoutSeconds", "fieldManager", "force", "dryRun",
               "propagationPolicy", "tailLines", "container", "includeObject"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=10,
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    path = draw(st.sampled_from(_PREFIXES))
    if draw(st.booleans()):
        path += "/namespaces/" + draw(st.sampled_from(["default", "other", ""]))
    path += "/" + draw(st.sampled_from(_PLURALS))
    if draw(st.booleans()):
        path += "/" + draw(st.sampled_from(_NAMES))
        sub = draw(st.sampled_from(_SUBRESOURCES))
        path += f"/{sub}" if sub else ""
    query = draw(st.dictionaries(st.sampled_from(_QUERY_KEYS),
                                 st.sampled_from(["", "1", "true", "-1", "abc", "0", "a=b",
                                                  "metadata.name=web", "All", "Orphan"]),
                                 max_size=4))
    if draw(st.booleans()):
        body = json.dumps(draw(st.one_of(
            json_values, st.just(configmap("c")), st.just(deployment("web")),
            st.builds(lambda m: dict(configmap("c"), metadata=m), json_values),
            st.builds(lambda ops: ops, st.lists(st.fixed_dictionaries(
                {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]),
                 "path": st.sampled_from(["", "/", "/data", "/data/a", "/spec/replicas", "/x/-",
                                          "/metadata/labels/a~1b"]),
                 "value": json_values}), max_size=3)),
        ))).encode()
    else:
        body = draw(st.binary(max_size=16))
    return {"method": draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"])),
            "url": path, "params": query, "content": body,
            "headers": {"content-type": draw(st.sampled_from(_CONTENT_TYPES))}}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("fuzz")
    with LocalCluster(Path(folder) / "cluster.db", SystemClock()) as store:
        store.create(widget_crd())
        store.create(configmap("c", a="1"))
        store.create(deployment("web"))
        store.create({"apiVersion": "example.com/v1", "kind": "Widget",
                      "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}})
        app = build_app(store, SystemClock(), stop=threading.Event(), logs_dir=folder / "logs")
        with TestClient(app, raise_server_exceptions=False) as test_client:
            yield test_client


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=requests())
def test_every_request_gets_a_json_answer_below_500(client: TestClient,
                                                    request: dict[str, Any]) -> None:
    params = dict(request["params"])
    if params.get("watch") in ("1", "true"):
        params["timeoutSeconds"] = "1"  # a watch that ends by itself
    response = client.request(request["method"], request["url"], params=params,
                              content=request["content"], headers=request["headers"])
    assert response.status_code < 500, response.text
    if response.status_code >= 400 or "log" not in request["url"]:
        assert response.headers["content-type"] == "application/json", response.text
