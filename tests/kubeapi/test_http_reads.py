"""Discovery, lists with selectors and pages, and Table output, over HTTP."""

from __future__ import annotations

from typing import Any

import httpx2

from kubeapi.conftest import Api
from kubeapi.objects import configmap, deployment, widget_crd

CM = "/api/v1/namespaces/default/configmaps"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _get(api: Api, path: str, **params: Any) -> dict[str, Any]:
    response = httpx2.get(f"{api.url}{path}", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    return body


def test_discovery_names_groups_resources_and_subresources(api: Api) -> None:
    assert _get(api, "/api")["versions"] == ["v1"]
    groups = {g["name"]: g for g in _get(api, "/apis")["groups"]}
    assert groups["apps"]["preferredVersion"]["groupVersion"] == "apps/v1"
    assert groups["networking.istio.io"]["preferredVersion"]["version"] == "v1"
    apps = {r["name"]: r for r in _get(api, "/apis/apps/v1")["resources"]}
    assert apps["deployments"]["shortNames"] == ["deploy"]
    assert apps["deployments/scale"]["kind"] == "Scale"
    assert "deployments/status" in apps
    core = {r["name"]: r for r in _get(api, "/api/v1")["resources"]}
    assert core["configmaps"]["namespaced"] and not core["namespaces"]["namespaced"]
    assert "configmaps/status" not in core  # a ConfigMap has no status subresource


def test_a_crd_adds_its_kind_to_discovery_and_openapi(api: Api) -> None:
    assert "example.com" not in {g["name"] for g in _get(api, "/apis")["groups"]}
    api.store.create(widget_crd())
    resources = {r["name"]: r for r in _get(api, "/apis/example.com/v1")["resources"]}
    assert resources["widgets"]["shortNames"] == ["wd"]
    assert {"widgets/status", "widgets/scale"} <= set(resources)
    index = _get(api, "/openapi/v3")["paths"]
    document = _get(api, index["apis/example.com/v1"]["serverRelativeURL"].split("?")[0])
    schema = document["components"]["schemas"]["com.example.v1.Widget"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "version": "v1", "kind": "Widget"}]


def test_pages_of_a_list_follow_continue_to_every_object(api: Api) -> None:
    for n in range(5):
        api.store.create(configmap(f"cm{n}"))
    names: list[str] = []
    page = _get(api, CM, limit=2)
    while True:
        names += [o["metadata"]["name"] for o in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == 5 - len(names)
        page = _get(api, CM, limit=2, **{"continue": token})
    assert names == [f"cm{n}" for n in range(5)]


def test_a_compacted_continue_token_is_410_expired(api: Api) -> None:
    for n in range(3):
        api.store.create(configmap(f"cm{n}"))
    token = _get(api, CM, limit=1)["metadata"]["continue"]
    api.store.create(configmap("later"))
    api.store.compact(keep=0)
    response = httpx2.get(f"{api.url}{CM}", params={"limit": 1, "continue": token})
    assert response.status_code == 410
    assert response.headers["content-type"] == "application/json"
    assert response.json()["reason"] == "Expired"


def test_label_and_field_selectors_narrow_a_list(api: Api) -> None:
    api.store.create(configmap("a", labels={"tier": "web"}))
    api.store.create(configmap("b", labels={"tier": "db"}))
    api.store.create(configmap("c", labels={"tier": "web"}))
    names = [o["metadata"]["name"] for o in _get(api, CM, labelSelector="tier=web")["items"]]
    assert names == ["a", "c"]
    picked = _get(api, "/api/v1/configmaps", fieldSelector="metadata.name=b")["items"]
    assert [o["metadata"]["name"] for o in picked] == ["b"]
    response = httpx2.get(f"{api.url}{CM}", params={"fieldSelector": "data.x=1"})
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"


def test_kubectl_get_is_answered_with_a_table(api: Api) -> None:
    api.store.create(deployment("web", replicas=3))
    response = httpx2.get(f"{api.url}/apis/apps/v1/namespaces/default/deployments",
                          headers={"accept": TABLE})
    table = response.json()
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0),
                       ("Age", 0), ("Containers", 1), ("Images", 1), ("Selector", 1)]
    (row,) = table["rows"]
    assert row["cells"][:2] == ["web", "0/3"]
    assert row["cells"][5:] == ["app", "web:1", "app=web"]  # shown by -o wide
    assert row["object"]["kind"] == "PartialObjectMetadata"


def test_a_custom_kind_table_uses_its_printer_columns(api: Api) -> None:
    api.store.create(widget_crd())
    api.store.create({"apiVersion": "example.com/v1", "kind": "Widget",
                      "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 7}})
    response = httpx2.get(f"{api.url}/apis/example.com/v1/namespaces/default/widgets/w",
                          headers={"accept": TABLE})
    table = response.json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Age"]
    assert table["rows"][0]["cells"][:2] == ["w", 7]


def test_events_are_listed_as_kubectl_shows_them(api: Api) -> None:
    cm = api.store.create(configmap("noted"))
    api.store.record_event(cm, reason="Checked", message="looked fine")
    response = httpx2.get(f"{api.url}/api/v1/namespaces/default/events",
                          headers={"accept": TABLE})
    table = response.json()
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0),
                       ("Message", 0), ("Name", 1)]
    (row,) = table["rows"]
    assert row["cells"][1:5] == ["Normal", "Checked", "configmap/noted", "looked fine"]


def test_claims_and_volumes_are_tables_with_kubectls_columns(api: Api) -> None:
    api.store.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": "data", "namespace": "default"},
                      "spec": {"volumeName": "pvc-1"}})
    api.store.patch_status("v1", "PersistentVolumeClaim", "data", "default",
                           {"phase": "Bound", "capacity": {"storage": "2Gi"}})
    api.store.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pvc-1"},
                      "spec": {"capacity": {"storage": "2Gi"},
                               "persistentVolumeReclaimPolicy": "Delete",
                               "claimRef": {"namespace": "default", "name": "data"}}})
    claims = httpx2.get(f"{api.url}/api/v1/namespaces/default/persistentvolumeclaims",
                        headers={"accept": TABLE}).json()
    assert [c["name"] for c in claims["columnDefinitions"]][:4] == [
        "Name", "Status", "Volume", "Capacity"]
    assert claims["rows"][0]["cells"][:4] == ["data", "Bound", "pvc-1", "2Gi"]
    volumes = httpx2.get(f"{api.url}/api/v1/persistentvolumes", headers={"accept": TABLE}).json()
    assert volumes["rows"][0]["cells"][:5] == ["pvc-1", "2Gi", "Delete", "Pending", "default/data"]
