"""The ReplicaSet built for a Deployment-like owner: hash label everywhere, owner untouched."""

from __future__ import annotations

import copy
from typing import Any

from headway.model.owned_replica_set import owned_replica_set


def _owner() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "uid": "u-1"},
        "spec": {
            "replicas": 3,
            "minReadySeconds": 5,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        },
    }


def _build(owner: dict[str, Any]) -> dict[str, Any]:
    return owned_replica_set(
        owner,
        hash_label="pod-template-hash",
        pod_hash="abc123",
        replicas=2,
        annotations={"deployment.kubernetes.io/revision": "4"},
        owner_reference={"kind": "Deployment", "name": "web", "uid": "u-1"},
    )


def test_hash_label_on_the_set_its_selector_and_its_pod_template() -> None:
    rs = _build(_owner())
    expected = {"app": "web", "pod-template-hash": "abc123"}
    assert rs["metadata"]["name"] == "web-abc123"
    assert rs["metadata"]["namespace"] == "default"
    assert rs["metadata"]["labels"] == expected
    assert rs["spec"]["selector"] == {"matchLabels": expected}
    assert rs["spec"]["template"]["metadata"]["labels"] == expected
    assert rs["spec"]["replicas"] == 2
    assert rs["spec"]["minReadySeconds"] == 5
    assert rs["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "4"}
    assert rs["metadata"]["ownerReferences"] == [
        {"kind": "Deployment", "name": "web", "uid": "u-1"}
    ]


def test_the_owner_is_not_changed_and_zero_min_ready_is_left_out() -> None:
    owner = _owner()
    owner["spec"]["minReadySeconds"] = 0
    before = copy.deepcopy(owner)
    rs = _build(owner)
    assert owner == before
    assert "minReadySeconds" not in rs["spec"]
