"""Every error is a `Status` with `Content-Type: application/json` exactly, and the code and
reason a Kubernetes API server gives (clients switch on them)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from headway.cluster.errors import StaleVersion
from headway.cluster.local.api.kubeapi import tables
from kubeapi.conftest import Api
from kubeapi.objects import configmap, deployment, widget_crd

CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _status(response: httpx2.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert (body["kind"], body["apiVersion"], body["status"]) == ("Status", "v1", "Failure")
    assert (body["code"], body["reason"]) == (code, reason)
    return body


def test_get_of_a_missing_object_is_404_not_found(api: Api) -> None:
    body = _status(httpx2.get(f"{api.url}{DEPLOY}/nope"), 404, "NotFound")
    assert body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}


def test_an_unknown_resource_or_path_is_404(api: Api) -> None:
    _status(httpx2.get(f"{api.url}/apis/example.com/v1/namespaces/default/widgets"),
            404, "NotFound")
    _status(httpx2.get(f"{api.url}/nothing/here"), 404, "NotFound")


def test_create_of_an_existing_name_is_409_already_exists(api: Api) -> None:
    api.store.create(configmap("taken"))
    response = httpx2.post(f"{api.url}{CM}", json=configmap("taken"))
    body = _status(response, 409, "AlreadyExists")
    assert body["message"] == 'configmaps "taken" already exists'


def test_put_with_a_stale_resource_version_is_409_conflict(api: Api) -> None:
    created = api.store.create(configmap("c", a="1"))
    api.store.update(configmap("c", a="2"))
    stale = dict(configmap("c", a="3"))
    stale["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    body = _status(httpx2.put(f"{api.url}{CM}/c", json=stale), 409, "Conflict")
    assert "the object has been modified" in body["message"]
    assert api.store.get("v1", "ConfigMap", "c", "default")["data"] == {"a": "2"}


def test_an_apply_conflict_lists_each_field_as_a_cause(api: Api) -> None:
    api.store.apply(deployment("web", replicas=2), field_manager="argocd")
    response = httpx2.patch(
        f"{api.url}{DEPLOY}/web", params={"fieldManager": "kubectl"},
        content=json.dumps(deployment("web", replicas=5)),
        headers={"content-type": "application/apply-patch+yaml"},
    )
    body = _status(response, 409, "Conflict")
    assert body["details"]["causes"] == [{"type": "FieldManagerConflict",
                                          "message": 'conflict with "argocd"',
                                          "field": ".spec.replicas"}]
    forced = httpx2.patch(
        f"{api.url}{DEPLOY}/web", params={"fieldManager": "kubectl", "force": "true"},
        content=json.dumps(deployment("web", replicas=5)),
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert forced.status_code == 200 and forced.json()["spec"]["replicas"] == 5


def test_an_invalid_object_is_422(api: Api) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.example.com"
    body = _status(httpx2.post(f"{api.url}/apis/apiextensions.k8s.io/v1/"
                               "customresourcedefinitions", json=crd), 422, "Invalid")
    assert "metadata.name" in body["message"]


def test_a_body_that_is_not_json_is_400(api: Api) -> None:
    response = httpx2.post(f"{api.url}{CM}", content=b"{not json",
                           headers={"content-type": "application/json"})
    _status(response, 400, "BadRequest")


def test_an_object_sent_to_another_kind_is_400(api: Api) -> None:
    _status(httpx2.post(f"{api.url}{DEPLOY}", json=configmap("x")), 400, "BadRequest")


def test_a_strategic_merge_patch_on_a_custom_kind_is_415(api: Api) -> None:
    api.store.create(widget_crd())
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}}
    api.store.create(widget)
    response = httpx2.patch(
        f"{api.url}/apis/example.com/v1/namespaces/default/widgets/w",
        content=b'{"spec":{"size":2}}',
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    _status(response, 415, "UnsupportedMediaType")


def test_delete_preconditions_and_unknown_policies_are_refused(api: Api) -> None:
    api.store.create(configmap("d"))
    precondition = {"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": "00000000-not-the-uid"}}
    response = httpx2.request("DELETE", f"{api.url}{CM}/d", json=precondition)
    _status(response, 409, "Conflict")
    response = httpx2.request("DELETE", f"{api.url}{CM}/d",
                              json={"propagationPolicy": "Sometimes"})
    _status(response, 400, "BadRequest")
    assert api.store.get("v1", "ConfigMap", "d", "default")


def test_a_method_a_resource_does_not_take_is_405(api: Api) -> None:
    api.store.create(configmap("m"))
    _status(httpx2.post(f"{api.url}{CM}/m", json=configmap("m")), 405, "MethodNotAllowed")


def test_a_write_into_a_missing_namespace_names_the_namespace(api: Api) -> None:
    cm = configmap("c")
    cm["metadata"]["namespace"] = "nowhere"
    response = httpx2.post(f"{api.url}/api/v1/namespaces/nowhere/configmaps", json=cm)
    body = _status(response, 404, "NotFound")
    assert body["message"] == 'namespaces "nowhere" not found'


def test_a_bad_label_selector_or_version_is_400(api: Api) -> None:
    body = _status(httpx2.get(f"{api.url}{CM}", params={"labelSelector": "a==="}),
                   400, "BadRequest")
    assert body["message"].startswith("labelSelector:")
    _status(httpx2.get(f"{api.url}{CM}", params={"watch": "1", "resourceVersion": "abc"}),
            400, "BadRequest")


def test_an_unforeseen_failure_is_a_500_status_not_a_text_page(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("printer exploded")

    monkeypatch.setattr(tables, "table", broken)
    api.store.create(configmap("t"))
    response = httpx2.get(f"{api.url}{CM}", headers={"accept": TABLE})
    body = _status(response, 500, "InternalError")
    assert "RuntimeError: printer exploded" in body["message"]


def test_a_conflict_that_is_not_about_versions_is_not_called_a_modification(api: Api) -> None:
    """The stale-version wording comes from the store's `StaleVersion` type, not from a word in
    a message: a write into a namespace being deleted (of an object whose name says "stale")
    is a 409 that says what it is."""
    api.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}})
    held = configmap("keep")
    held["metadata"].update(namespace="going", finalizers=["example.com/hold"])
    api.store.create(held)
    api.store.delete("v1", "Namespace", "going")
    fresh = configmap("stale-free")
    fresh["metadata"]["namespace"] = "going"
    body = _status(httpx2.post(f"{api.url}/api/v1/namespaces/going/configmaps", json=fresh),
                   409, "Conflict")
    assert "being terminated" in body["message"]
    assert "the object has been modified" not in body["message"]


def test_the_store_raises_stale_version_for_a_stale_precondition(api: Api) -> None:
    created = api.store.create(deployment("v", replicas=1))
    api.store.update(deployment("v", replicas=2))
    stale = dict(deployment("v", replicas=3))
    stale["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    with pytest.raises(StaleVersion):
        api.store.update(stale)
    with pytest.raises(StaleVersion):
        api.store.patch_status("apps/v1", "Deployment", "v", "default", {"replicas": 1},
                               resource_version=created["metadata"]["resourceVersion"])
