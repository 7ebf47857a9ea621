"""Writes over HTTP: create, PUT, patches, the status and scale subresources, delete with
propagation policies, and dry runs."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from kubeapi.conftest import Api
from kubeapi.objects import configmap, deployment

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
CM = "/api/v1/namespaces/default/configmaps"


def _ok(response: httpx2.Response, code: int = 200) -> dict[str, Any]:
    assert response.status_code == code, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    return body


def test_create_takes_the_namespace_from_the_url_and_answers_201(api: Api) -> None:
    cm = configmap("c", a="1")
    del cm["metadata"]["namespace"]
    created = _ok(httpx2.post(f"{api.url}{CM}", json=cm), 201)
    assert created["metadata"]["namespace"] == "default"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]


def test_a_dry_run_create_writes_nothing(api: Api) -> None:
    _ok(httpx2.post(f"{api.url}{CM}", params={"dryRun": "All"}, json=configmap("d")), 201)
    assert api.store.list("v1", "ConfigMap") == []


def test_a_put_to_the_main_resource_leaves_status_to_the_status_subresource(api: Api) -> None:
    api.store.create(deployment("web"))
    api.store.patch_status("apps/v1", "Deployment", "web", "default", {"replicas": 1})
    live = api.store.get("apps/v1", "Deployment", "web", "default")
    live["spec"]["replicas"] = 4
    live["status"] = {"replicas": 99}
    replaced = _ok(httpx2.put(f"{api.url}{DEPLOY}/web", json=live))
    assert (replaced["spec"]["replicas"], replaced["status"]) == (4, {"replicas": 1})
    replaced["spec"]["replicas"] = 7
    replaced["status"] = {"replicas": 4}
    status = _ok(httpx2.put(f"{api.url}{DEPLOY}/web/status", json=replaced))
    assert (status["spec"]["replicas"], status["status"]) == (4, {"replicas": 4})


def test_patches_by_content_type(api: Api) -> None:
    api.store.create(deployment("web"))
    url = f"{api.url}{DEPLOY}/web"

    def patch(content_type: str, body: Any) -> dict[str, Any]:
        return _ok(httpx2.patch(url, content=json.dumps(body),
                                headers={"content-type": content_type}))

    patch("application/json-patch+json",
          [{"op": "replace", "path": "/spec/replicas", "value": 2}])
    patch("application/merge-patch+json", {"metadata": {"labels": {"team": "a"}}})
    done = patch("application/strategic-merge-patch+json", {"spec": {"template": {"spec": {
        "containers": [{"name": "sidecar", "image": "proxy:1"}]}}}})
    assert done["spec"]["replicas"] == 2
    assert done["metadata"]["labels"] == {"team": "a"}
    containers = done["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "sidecar"]


def test_a_patch_naming_a_stale_version_is_a_conflict(api: Api) -> None:
    created = api.store.create(configmap("c", a="1"))
    api.store.update(configmap("c", a="2"))
    stale = {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
             "data": {"a": "3"}}
    response = httpx2.patch(f"{api.url}{CM}/c", content=json.dumps(stale),
                            headers={"content-type": "application/merge-patch+json"})
    assert response.status_code == 409


def test_apply_creates_with_201_then_updates_with_200(api: Api) -> None:
    def apply(replicas: int) -> httpx2.Response:
        return httpx2.patch(f"{api.url}{DEPLOY}/web", params={"fieldManager": "me"},
                            content=json.dumps(deployment("web", replicas=replicas)),
                            headers={"content-type": "application/apply-patch+yaml"})

    assert _ok(apply(1), 201)["spec"]["replicas"] == 1
    applied = _ok(apply(2))
    assert applied["spec"]["replicas"] == 2
    managers = {m["manager"] for m in applied["metadata"]["managedFields"]}
    assert managers == {"me"}


def test_the_scale_subresource_reads_and_sets_replicas(api: Api) -> None:
    api.store.create(deployment("web", replicas=2))
    scale = _ok(httpx2.get(f"{api.url}{DEPLOY}/web/scale"))
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"]["selector"] == "app=web"
    _ok(httpx2.patch(f"{api.url}{DEPLOY}/web/scale", content=b'{"spec":{"replicas":5}}',
                     headers={"content-type": "application/merge-patch+json",
                              "user-agent": "kubectl-scale/v1.37"}))
    live = api.store.get("apps/v1", "Deployment", "web", "default")
    assert live["spec"]["replicas"] == 5
    writers = {m["manager"] for m in live["metadata"]["managedFields"]}
    assert "kubectl-scale" in writers  # named from the User-Agent, as Kubernetes does
    stale = dict(scale, spec={"replicas": 1})
    response = httpx2.put(f"{api.url}{DEPLOY}/web/scale", json=stale)
    assert response.status_code == 409


def _owned_configmap(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    cm = configmap(name)
    cm["metadata"]["ownerReferences"] = [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}]
    return cm


def test_delete_orphan_keeps_dependents_and_background_removes_them(api: Api) -> None:
    keep = api.store.create(deployment("keep"))
    drop = api.store.create(deployment("drop"))
    api.store.create(_owned_configmap("kept", keep))
    api.store.create(_owned_configmap("dropped", drop))
    gone = _ok(httpx2.request("DELETE", f"{api.url}{DEPLOY}/keep",
                              json={"propagationPolicy": "Orphan"}))
    assert gone["kind"] == "Status" and gone["status"] == "Success"
    httpx2.request("DELETE", f"{api.url}{DEPLOY}/drop", params={"propagationPolicy":
                                                                 "Background"})
    names = {o["metadata"]["name"] for o in api.store.list("v1", "ConfigMap")}
    assert names == {"kept"}


def test_a_foreground_delete_answers_the_object_while_a_dependent_holds_it(api: Api) -> None:
    owner = api.store.create(deployment("web"))
    held = _owned_configmap("held", owner)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    api.store.create(held)
    deleting = _ok(httpx2.request("DELETE", f"{api.url}{DEPLOY}/web",
                                  json={"propagationPolicy": "Foreground"}))
    assert deleting["kind"] == "Deployment"
    assert "foregroundDeletion" in deleting["metadata"]["finalizers"]
    assert deleting["metadata"]["deletionTimestamp"]
    release = {"metadata": {"finalizers": None}}
    _ok(httpx2.patch(f"{api.url}{CM}/held", content=json.dumps(release),
                     headers={"content-type": "application/merge-patch+json"}))
    assert api.store.list("apps/v1", "Deployment") == []


def test_delete_collection_removes_what_the_selector_matches(api: Api) -> None:
    api.store.create(configmap("a", labels={"batch": "old"}))
    api.store.create(configmap("b", labels={"batch": "old"}))
    api.store.create(configmap("c", labels={"batch": "new"}))
    deleted = _ok(httpx2.request("DELETE", f"{api.url}{CM}",
                                 params={"labelSelector": "batch=old"}))
    assert [o["metadata"]["name"] for o in deleted["items"]] == ["a", "b"]
    assert [o["metadata"]["name"] for o in api.store.list("v1", "ConfigMap")] == ["c"]


def test_an_access_review_is_answered_allowed_and_not_stored(api: Api) -> None:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "delete", "resource": "pods"}}}
    answered = _ok(httpx2.post(
        f"{api.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review), 201)
    assert answered["status"]["allowed"] is True
    assert answered["spec"] == review["spec"]
    listed = httpx2.get(f"{api.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert listed.status_code == 405


def test_a_dry_run_put_is_the_stores_update_without_the_write(api: Api) -> None:
    created = api.store.create(configmap("d", a="1"))
    version = created["metadata"]["resourceVersion"]
    changed = dict(configmap("d", a="2"))
    changed["metadata"]["resourceVersion"] = version
    answer = _ok(httpx2.put(f"{api.url}{CM}/d", params={"dryRun": "All"}, json=changed))
    assert answer["data"] == {"a": "2"}
    live = api.store.get("v1", "ConfigMap", "d", "default")
    assert live["data"] == {"a": "1"} and live["metadata"]["resourceVersion"] == version
    bad = dict(configmap("d", a="3"))
    bad["metadata"]["resourceVersion"] = version
    bad["data"] = {"a": 3}  # not a string: the store's schema check refuses it, dry or not
    refused = httpx2.put(f"{api.url}{CM}/d", params={"dryRun": "All"}, json=bad)
    assert refused.status_code == 422, refused.text
    api.store.update(configmap("d", a="5"))  # `version` is stale now: the usual 409
    stale = httpx2.put(f"{api.url}{CM}/d", params={"dryRun": "All"}, json=changed)
    assert stale.status_code == 409 and "has been modified" in stale.json()["message"]


def test_a_dry_run_status_write_is_checked_like_a_real_one(api: Api) -> None:
    """`dryRun=All` on `/status` answered the request body back unchecked; now the store's
    patch_status runs every check and stores nothing."""
    created = api.store.create(deployment("web", replicas=2))
    version = created["metadata"]["resourceVersion"]
    body = dict(created, status={"replicas": 2})
    answer = _ok(httpx2.put(f"{api.url}{DEPLOY}/web/status", params={"dryRun": "All"},
                            json=body))
    assert answer["status"] == {"replicas": 2}
    live = api.store.get("apps/v1", "Deployment", "web", "default")
    assert live.get("status") != {"replicas": 2}
    assert live["metadata"]["resourceVersion"] == version
    api.store.update(deployment("web", replicas=3))  # `version` is stale now
    stale = httpx2.put(f"{api.url}{DEPLOY}/web/status", params={"dryRun": "All"}, json=body)
    assert stale.status_code == 409, stale.text
    missing = httpx2.put(f"{api.url}{DEPLOY}/nope/status", params={"dryRun": "All"},
                         json=dict(body, metadata={"name": "nope", "namespace": "default"}))
    assert missing.status_code == 404, missing.text
