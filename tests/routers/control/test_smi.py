"""The SMI reconciler writes the TrafficSplit Argo Rollouts writes.

Expected objects checked against argo-rollouts `rollout/trafficrouting/smi/smi.go`
(`generateTrafficSplits`, `trafficSplitV1Alpha1..3`, `objectMeta`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import HeaderRoute
from headway.routers.control.reconciler import TrafficRoutingError, TrafficRoutingReconciler
from headway.routers.control.smi import SMIReconciler
from routers.control.helpers import crd, local_cluster, stored_rollout, stripped

SMI_CRD = crd(
    group="split.smi-spec.io",
    kind="TrafficSplit",
    plural="trafficsplits",
    versions=("v1alpha1", "v1alpha2", "v1alpha3"),
)


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    return local_cluster(tmp_path, clock, SMI_CRD)


def _router(cluster: LocalCluster, **extra: str) -> SMIReconciler:
    return SMIReconciler(
        cluster,
        rollout=stored_rollout(cluster),
        stable_service="shop-stable",
        canary_service="shop-canary",
        **extra,
    )


def test_first_weight_creates_an_owned_split_with_quantity_weights(cluster: LocalCluster) -> None:
    router: TrafficRoutingReconciler = _router(cluster)
    router_uid = cluster.get("argoproj.io/v1alpha1", "Rollout", "shop", "default")["metadata"][
        "uid"
    ]
    router.set_weight(20)
    split = cluster.get("split.smi-spec.io/v1alpha1", "TrafficSplit", "shop", "default")
    assert stripped(split) == {
        "apiVersion": "split.smi-spec.io/v1alpha1",
        "kind": "TrafficSplit",
        "metadata": {
            "name": "shop",
            "namespace": "default",
            "ownerReferences": [
                {
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": "Rollout",
                    "name": "shop",
                    "uid": router_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "service": "shop-stable",
            "backends": [
                {"service": "shop-canary", "weight": "20"},
                {"service": "shop-stable", "weight": "80"},
            ],
        },
    }
    assert router.verify_weight(20) is True
    assert router.verify_weight(30) is False


def test_named_split_root_service_and_integer_weights_of_v1alpha3(cluster: LocalCluster) -> None:
    router = _router(
        cluster,
        root_service="shop",
        traffic_split_name="shop-split",
        api_version="split.smi-spec.io/v1alpha3",
    )
    router.set_weight(10)
    router.set_weight(60)
    split = cluster.get("split.smi-spec.io/v1alpha3", "TrafficSplit", "shop-split", "default")
    assert split["spec"] == {
        "service": "shop",
        "backends": [
            {"service": "shop-canary", "weight": 60},
            {"service": "shop-stable", "weight": 40},
        ],
    }


def test_a_split_the_rollout_does_not_own_is_refused(cluster: LocalCluster) -> None:
    SMIReconciler(
        cluster,
        rollout=stored_rollout(cluster, "other"),
        stable_service="a",
        canary_service="b",
        traffic_split_name="shop",
    ).set_weight(0)
    with pytest.raises(TrafficRoutingError, match="does not own TrafficSplit 'shop'"):
        _router(cluster).set_weight(10)


def test_header_routes_are_refused_and_an_unknown_version_too(cluster: LocalCluster) -> None:
    with pytest.raises(TrafficRoutingError, match="SMI router has no header routes"):
        _router(cluster).set_header_route(HeaderRoute(name="qa", match=({"headerName": "x"},)))
    with pytest.raises(TrafficRoutingError, match="Unsupported TrafficSplit API version"):
        _router(cluster, api_version="split.smi-spec.io/v1")
