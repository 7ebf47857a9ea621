"""The Istio reconciler's mirror route, on the store and through the Kubernetes backend: the
VirtualService after each call is the one argo-rollouts `rollout/trafficrouting/istio/
istio.go` writes (`SetMirrorRoute` -> `reconcileVirtualServiceMirrorRoutes` ->
`createMirrorRoute`, then `orderRoutes`; `SetWeight` through `generateVirtualServicePatches`,
which weighs managed mirror routes too; `RemoveManagedRoutes`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.cluster.protocol import Cluster
from headway.rollout.plan import MirrorRoute
from headway.routers.control.istio import IstioReconciler
from routers.control.helpers import BACKENDS, backend_cluster, crd, stripped

API = "networking.istio.io/v1beta1"
CRDS = (
    crd(
        group="networking.istio.io",
        kind="VirtualService",
        plural="virtualservices",
        versions=("v1beta1",),
    ),
)
MATCH = (
    {"method": {"exact": "POST"}, "path": {"prefix": "/color"}},
    {"headers": {"x-shadow": {"exact": "yes"}}},
)


def _dest(host: str, weight: int) -> dict[str, Any]:
    return {"destination": {"host": host, "port": {"number": 8080}}, "weight": weight}


def _user_vs() -> dict[str, Any]:
    primary = {"name": "primary", "route": [_dest("shop-stable", 100), _dest("shop-canary", 0)]}
    return {
        "apiVersion": API,
        "kind": "VirtualService",
        "metadata": {"name": "shop", "namespace": "default"},
        "spec": {
            "hosts": ["shop"],
            "http": [
                {
                    "name": "legacy",
                    "match": [{"uri": {"prefix": "/old"}}],
                    "route": [_dest("shop-stable", 100)],
                },
                primary,
            ],
        },
    }


def _argo_mirror(stable: int, canary: int) -> dict[str, Any]:
    route = [_dest("shop-stable", stable), _dest("shop-canary", canary)]
    return {
        "name": "shadow",
        "match": [
            {"method": {"exact": "POST"}, "uri": {"prefix": "/color"}},
            {"headers": {"x-shadow": {"exact": "yes"}}},
        ],
        "route": [d if d["weight"] else {"destination": d["destination"]} for d in route],
        "mirror": {"host": "shop-canary", "port": {"number": 8080}},
        "mirrorPercentage": {"value": 30},
    }


def _http(cluster: Cluster) -> list[dict[str, Any]]:
    return list(stripped(cluster.get(API, "VirtualService", "shop", "default"))["spec"]["http"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_mirror_route_argo_writes_on_both_backends(backend: str, tmp_path: Path) -> None:
    with backend_cluster(backend, tmp_path, *CRDS) as cluster:
        cluster.apply(_user_vs(), field_manager="git")
        router = IstioReconciler(
            cluster,
            namespace="default",
            virtual_services=[{"name": "shop", "routes": ["primary"]}],
            stable_service="shop-stable",
            canary_service="shop-canary",
            managed_routes=("beta", "shadow"),
        )
        legacy, primary = _http(cluster)
        router.set_mirror_route(MirrorRoute("shadow", MATCH, 30))
        assert _http(cluster) == [_argo_mirror(100, 0), legacy, primary]

        router.set_weight(40)
        weighted = {**primary, "route": [_dest("shop-stable", 60), _dest("shop-canary", 40)]}
        assert _http(cluster) == [_argo_mirror(60, 40), legacy, weighted]

        router.set_mirror_route(MirrorRoute("shadow", ()))
        assert _http(cluster) == [legacy, weighted]
        router.set_mirror_route(MirrorRoute("shadow", MATCH, 30))
        router.remove_managed_routes()
        assert _http(cluster) == [legacy, weighted]
