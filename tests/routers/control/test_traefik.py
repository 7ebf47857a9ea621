"""The Traefik reconciler sets the weights of a weighted TraefikService as Argo Rollouts does.

Expected objects checked against argo-rollouts `rollout/trafficrouting/traefik/traefik.go`
(`SetWeight`, `getService`) and the default API group in `utils/defaults/defaults.go`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import HeaderRoute
from headway.routers.control.reconciler import TrafficRoutingError, TrafficRoutingReconciler
from headway.routers.control.traefik import TraefikReconciler
from routers.control.helpers import crd, local_cluster

API = "traefik.io/v1alpha1"
TRAEFIK_CRD = crd(
    group="traefik.io", kind="TraefikService", plural="traefikservices", versions=("v1alpha1",)
)


def _service(services: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "TraefikService",
        "metadata": {"name": "shop-weighted", "namespace": "default"},
        "spec": {"weighted": {"services": services, "sticky": {"cookie": {}}}},
    }


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    return local_cluster(tmp_path, clock, TRAEFIK_CRD)


def _router(cluster: LocalCluster) -> TrafficRoutingReconciler:
    return TraefikReconciler(
        cluster,
        namespace="default",
        traefik_service="shop-weighted",
        stable_service="shop-stable",
        canary_service="shop-canary",
    )


def test_weights_land_on_the_two_named_entries_and_nothing_else(cluster: LocalCluster) -> None:
    cluster.apply(
        _service(
            [
                {"name": "shop-stable", "port": 80, "weight": 100},
                {"name": "shop-canary", "port": 80},
                {"name": "shop-legacy", "port": 80, "weight": 5},
            ]
        ),
        field_manager="git",
    )
    router = _router(cluster)
    router.set_weight(25)
    written = cluster.get(API, "TraefikService", "shop-weighted", "default")
    assert written["spec"] == {
        "weighted": {
            "services": [
                {"name": "shop-stable", "port": 80, "weight": 75},
                {"name": "shop-canary", "port": 80, "weight": 25},
                {"name": "shop-legacy", "port": 80, "weight": 5},
            ],
            "sticky": {"cookie": {}},
        }
    }
    assert router.verify_weight(25) is True
    assert router.verify_weight(50) is False


def test_missing_entries_and_services_list_are_named(cluster: LocalCluster) -> None:
    cluster.apply(_service([{"name": "shop-stable", "weight": 100}]), field_manager="git")
    with pytest.raises(TrafficRoutingError, match="canary Service 'shop-canary' is not in"):
        _router(cluster).set_weight(10)
    bare = _service([])
    bare["spec"] = {"mirroring": {"name": "x"}}
    cluster.apply(bare, field_manager="git", force=True)
    with pytest.raises(TrafficRoutingError, match=r"spec\.weighted\.services was not found"):
        _router(cluster).set_weight(10)


def test_missing_service_and_header_routes(cluster: LocalCluster) -> None:
    with pytest.raises(TrafficRoutingError, match="TraefikService default/shop-weighted not found"):
        _router(cluster).set_weight(10)
    with pytest.raises(TrafficRoutingError, match="Traefik router has no header routes"):
        _router(cluster).set_header_route(HeaderRoute(name="qa", match=()))
