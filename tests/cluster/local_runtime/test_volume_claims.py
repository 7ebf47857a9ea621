"""The volume-claim controller's decisions: the provisioned volume, what keeps a deleted
claim, and what the reclaim policy does once the claim is gone."""

from __future__ import annotations

from pathlib import Path

from headway.cluster.local.workloads.volume_claims import (
    claim_in_use,
    claim_status,
    provisioned_volume,
    reclaim_action,
)
from headway.model.obj import Obj

CLAIM: Obj = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "shop", "uid": "u-1"},
    "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "fast",
             "resources": {"requests": {"storage": "5Gi"}}},
}


def pod(phase: str, claim: str = "data") -> Obj:
    return {"metadata": {"name": "p"}, "status": {"phase": phase},
            "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}}


def test_the_provisioned_volume_carries_the_claims_request_and_points_back_at_it() -> None:
    volume = provisioned_volume(CLAIM, Path("/state/volumes/pvc-u-1"))
    assert volume["metadata"] == {"name": "pvc-u-1"}
    assert volume["spec"]["capacity"] == {"storage": "5Gi"}
    assert volume["spec"]["accessModes"] == ["ReadWriteMany"]
    assert volume["spec"]["storageClassName"] == "fast"
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert volume["spec"]["hostPath"]["path"] == "/state/volumes/pvc-u-1"
    assert volume["spec"]["claimRef"]["uid"] == "u-1"
    assert claim_status(volume) == {"phase": "Bound", "accessModes": ["ReadWriteMany"],
                                    "capacity": {"storage": "5Gi"}}


def test_a_claim_is_in_use_while_an_unfinished_pod_mounts_it() -> None:
    assert claim_in_use(CLAIM, [pod("Running")])
    assert claim_in_use(CLAIM, [pod("Pending")])
    assert not claim_in_use(CLAIM, [pod("Succeeded"), pod("Failed")])
    assert not claim_in_use(CLAIM, [pod("Running", claim="other")])


def test_a_volume_is_reclaimed_by_its_policy_only_once_its_claim_is_gone() -> None:
    volume = provisioned_volume(CLAIM, Path("/v/pvc-u-1"))
    assert reclaim_action(volume, {"u-1"}) is None
    assert reclaim_action(volume, set()) == "delete"
    retained = {**volume, "spec": {**volume["spec"], "persistentVolumeReclaimPolicy": "Retain"}}
    assert reclaim_action(retained, set()) == "release"
    assert reclaim_action({**retained, "status": {"phase": "Released"}}, set()) is None
    assert reclaim_action({"spec": {}}, set()) is None  # an unbound volume of the user's
