"""Every write to the local store meets its kind's Kubernetes schema: what an API server
refuses (wrong types; unknown fields under strict field validation) is not stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.errors import Invalid
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.schemas import builtin_check


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "store.db", clock) as cluster:
        yield cluster


def deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    body: dict[str, Any] = {
        "replicas": 2,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "main", "image": "web:1"}]},
        },
    }
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": body}


def causes(err: pytest.ExceptionInfo[Invalid]) -> dict[tuple[str | int, ...], str]:
    return dict(err.value.causes)


def test_a_wrong_type_is_refused_naming_the_field(store: LocalCluster) -> None:
    with pytest.raises(Invalid, match=r"spec\.replicas: expected integer") as err:
        store.apply(deployment(replicas="three"), field_manager="me")
    assert causes(err) == {("spec", "replicas"): 'expected integer, got string "three"'}
    assert store.list("apps/v1", "Deployment") == []


def test_a_wrong_type_is_refused_whatever_the_field_validation(store: LocalCluster) -> None:
    for mode in ("Warn", "Ignore"):
        with pytest.raises(Invalid, match="replicas"):
            store.apply(deployment(replicas="three"), field_manager="me", field_validation=mode)


def test_containers_that_are_not_a_list_are_refused(store: LocalCluster) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": "nope"}}
    with pytest.raises(Invalid) as err:
        store.create(pod)
    assert causes(err) == {("spec", "containers"): 'expected array, got string "nope"'}


def test_an_unknown_field_is_refused_under_strict(store: LocalCluster) -> None:
    typo = deployment()
    typo["spec"]["replica"] = 3
    with pytest.raises(Invalid) as err:
        store.apply(typo, field_manager="me")
    assert causes(err) == {("spec", "replica"): "unknown field"}


@pytest.mark.parametrize("mode", ["Warn", "Ignore"])
def test_an_unknown_field_is_dropped_under_warn_and_ignore(store: LocalCluster, mode: Any) -> None:
    typo = deployment()
    typo["spec"]["template"]["spec"]["containers"][0]["imagePolicy"] = "Always"
    stored = store.apply(typo, field_manager="me", field_validation=mode)
    assert stored["spec"]["template"]["spec"]["containers"][0] == {"name": "main", "image": "web:1"}


def test_update_and_create_are_checked_as_apply_is(store: LocalCluster) -> None:
    live = store.create(deployment())
    with pytest.raises(Invalid, match=r"spec\.paused: expected boolean"):
        store.update({**live, "spec": {**live["spec"], "paused": "yes"}})
    assert "paused" not in store.get("apps/v1", "Deployment", "web", "default")["spec"]


def test_null_and_int_or_string_values_pass(store: LocalCluster) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
    store.apply(deployment(strategy=strategy, minReadySeconds=None), field_manager="me")
    bad = {"rollingUpdate": {"maxSurge": [1]}}
    with pytest.raises(Invalid, match=r"maxSurge: expected string or integer, got a list"):
        store.apply(deployment(strategy=bad), field_manager="me")


def test_kinds_without_a_shipped_schema_are_stored_as_given(store: LocalCluster) -> None:
    rollout = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
               "metadata": {"name": "r"}, "spec": {"replica": "three"}}
    assert store.apply(rollout, field_manager="me")["spec"] == {"replica": "three"}
    # Istio's `networking.istio.io/v1` is not Kubernetes' `networking.k8s.io/v1`.
    assert builtin_check("networking.istio.io/v1", "Gateway") is None
    assert builtin_check("networking.k8s.io/v1", "Ingress") is not None


def test_status_is_not_checked_on_writes_of_the_spec(store: LocalCluster) -> None:
    body = deployment()
    body["status"] = {"replicas": "many"}
    store.apply(body, field_manager="me")


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "caches.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"kind": "Cache", "plural": "caches"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "port": {"x-kubernetes-int-or-string": True},
                    "note": {"type": "string", "nullable": True},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                }}},
            }},
        }],
    },
}


def cache(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Cache", "metadata": {"name": "c"},
            "spec": spec}


def test_a_custom_resource_meets_its_crd_schema(store: LocalCluster) -> None:
    store.apply(CRD, field_manager="me")
    store.apply(cache(size=3, port="http", note=None, extra={"any": {"thing": 1}}),
                field_manager="me")
    with pytest.raises(Invalid) as err:
        store.apply(cache(size="big", port=1.5, colour="red"), field_manager="me")
    assert causes(err) == {
        ("spec", "size"): 'expected integer, got string "big"',
        ("spec", "port"): "expected integer or string, got number 1.5",
        ("spec", "colour"): "unknown field",
    }


def test_a_custom_resource_without_a_crd_schema_is_stored_as_given(
    store: LocalCluster,
) -> None:
    crd = {**CRD, "spec": {**CRD["spec"], "versions": [{"name": "v1", "served": True}]}}
    store.apply(crd, field_manager="me")
    assert store.apply(cache(size="big"), field_manager="me")["spec"] == {"size": "big"}


def test_a_changed_crd_schema_applies_to_the_next_write(store: LocalCluster) -> None:
    store.apply(CRD, field_manager="me")
    store.apply(cache(size=1), field_manager="me")
    open_crd = {**CRD, "spec": {**CRD["spec"], "versions": [{
        "name": "v1", "served": True, "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}},
    }]}}
    store.apply(open_crd, field_manager="me")
    assert store.apply(cache(size="big"), field_manager="me")["spec"] == {"size": "big"}
