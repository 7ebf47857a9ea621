"""The NGINX reconciler creates and updates the canary Ingress Argo Rollouts would.

Expected objects checked against argo-rollouts `rollout/trafficrouting/nginx/nginx.go`
(`buildCanaryIngress`, `SetWeightPerIngress`, `getDesiredAnnotations`) and
`utils/ingress/ingress.go` (`GetCanaryIngressName`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import HeaderRoute
from headway.routers.control.nginx import NginxReconciler, canary_ingress_name
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import local_cluster, stored_rollout, stripped

API = "networking.k8s.io/v1"


def _path(service: str, path: str = "/") -> dict[str, Any]:
    backend = {"service": {"name": service, "port": {"number": 80}}}
    return {"path": path, "pathType": "Prefix", "backend": backend}


STABLE_INGRESS: dict[str, Any] = {
    "apiVersion": API,
    "kind": "Ingress",
    "metadata": {
        "name": "shop",
        "namespace": "default",
        "annotations": {
            "kubernetes.io/ingress.class": "nginx",
            "nginx.ingress.kubernetes.io/rewrite-target": "/",
        },
        "labels": {"team": "shop"},
    },
    "spec": {
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["shop.example"], "secretName": "shop-tls"}],
        "rules": [
            {
                "host": "shop.example",
                "http": {"paths": [_path("shop-stable"), _path("docs", "/docs")]},
            },
            {"host": "admin.example", "http": {"paths": [_path("admin")]}},
        ],
    },
}


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    c = local_cluster(tmp_path, clock)
    c.apply(STABLE_INGRESS, field_manager="git")
    return c


def _router(cluster: LocalCluster, rollout: RolloutIdentity, **extra: Any) -> NginxReconciler:
    return NginxReconciler(
        cluster,
        rollout=rollout,
        stable_ingresses=["shop"],
        stable_service="shop-stable",
        canary_service="shop-canary",
        **extra,
    )


def test_the_canary_ingress_is_a_copy_pointing_at_the_canary(cluster: LocalCluster) -> None:
    rollout = stored_rollout(cluster)
    router = _router(
        cluster,
        rollout,
        additional_annotations={
            "canary-by-header": "X-Canary",
            "nginx.ingress.kubernetes.io/canary-by-header-value": "yes",
        },
        canary_annotations={"example.com/owner": "shop"},
        max_traffic_weight=1000,
    )
    router.set_weight(50)
    written = cluster.get(API, "Ingress", "shop-shop-canary", "default")
    assert stripped(written) == {
        "apiVersion": API,
        "kind": "Ingress",
        "metadata": {
            "name": "shop-shop-canary",
            "namespace": "default",
            "annotations": {
                "kubernetes.io/ingress.class": "nginx",
                "nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
                "nginx.ingress.kubernetes.io/canary-by-header-value": "yes",
                "example.com/owner": "shop",
                "nginx.ingress.kubernetes.io/canary": "true",
                "nginx.ingress.kubernetes.io/canary-weight": "50",
                "nginx.ingress.kubernetes.io/canary-weight-total": "1000",
            },
            "ownerReferences": [rollout.owner_reference()],
        },
        "spec": {
            "rules": [
                {
                    "host": "shop.example",
                    "http": {"paths": [_path("shop-canary"), _path("docs", "/docs")]},
                }
            ],
            "tls": [{"hosts": ["shop.example"], "secretName": "shop-tls"}],
            "ingressClassName": "nginx",
        },
    }
    assert router.verify_weight(50) is True
    assert router.verify_weight(10) is False


def test_a_later_weight_keeps_foreign_annotations(cluster: LocalCluster) -> None:
    router = _router(cluster, stored_rollout(cluster))
    router.set_weight(10)
    name = "shop-shop-canary"
    written = cluster.get(API, "Ingress", name, "default")
    written["metadata"]["annotations"]["ops.example/ticket"] = "42"
    cluster.update(written, field_manager="ops")
    router.set_weight(30)
    annotations = cluster.get(API, "Ingress", name, "default")["metadata"]["annotations"]
    assert annotations["ops.example/ticket"] == "42"
    assert annotations["nginx.ingress.kubernetes.io/canary-weight"] == "30"
    assert "nginx.ingress.kubernetes.io/canary-weight-total" not in annotations


def test_refusals_name_what_is_wrong(cluster: LocalCluster) -> None:
    other = stored_rollout(cluster, "other")
    wrong_service = NginxReconciler(
        cluster,
        rollout=other,
        stable_ingresses=["shop"],
        stable_service="nope",
        canary_service="c",
    )
    with pytest.raises(TrafficRoutingError, match="'shop' has no rules using service nope"):
        wrong_service.set_weight(10)
    foreign = dict(STABLE_INGRESS, metadata={"name": "shop-shop-canary", "namespace": "default"})
    cluster.apply(foreign, field_manager="someone")
    with pytest.raises(TrafficRoutingError, match="controlled by different object"):
        _router(cluster, stored_rollout(cluster)).set_weight(10)
    with pytest.raises(TrafficRoutingError, match="use canary-by-header"):
        _router(cluster, other).set_header_route(HeaderRoute(name="qa", match=()))


def test_long_names_are_cut_to_fit() -> None:
    name = canary_ingress_name("r" * 200, "i" * 100)
    assert len(name) == 253
    assert name.endswith("i-canary")
