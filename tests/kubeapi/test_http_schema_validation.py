"""The API meets writes with the store's schema check: a wrong type is a 422 naming the
field; `fieldValidation` decides what an unknown field does (Warn when absent, as an API
server defaults it; kubectl sends Strict)."""

from __future__ import annotations

import httpx2

from kubeapi.conftest import Api
from kubeapi.objects import deployment

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


def test_a_wrong_type_is_422_with_the_field_as_its_cause(api: Api) -> None:
    body = deployment("web")
    body["spec"]["replicas"] = "three"
    response = httpx2.post(f"{api.url}{DEPLOY}", json=body)
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"] == [{
        "type": "FieldValueInvalid", "field": "spec.replicas",
        "message": 'expected integer, got string "three"',
    }]
    assert api.store.list("apps/v1", "Deployment") == []


def test_an_unknown_field_is_refused_under_strict_and_dropped_otherwise(api: Api) -> None:
    body = deployment("web")
    body["spec"]["replica"] = 3
    strict = httpx2.post(f"{api.url}{DEPLOY}", params={"fieldValidation": "Strict"}, json=body)
    assert strict.status_code == 422, strict.text
    assert strict.json()["details"]["causes"][0]["field"] == "spec.replica"
    created = httpx2.post(f"{api.url}{DEPLOY}", json=body)
    assert created.status_code == 201, created.text
    assert "replica" not in api.store.get("apps/v1", "Deployment", "web", "default")["spec"]
