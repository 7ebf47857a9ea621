"""The App Mesh reconciler labels the VirtualNodes and weighs the VirtualRouter's targets as
Argo Rollouts does, on the store and through the Kubernetes backend.

Expected objects checked against argo-rollouts `rollout/trafficrouting/appmesh/appmesh.go`:
`UpdateHash` / `updateVirtualNodeWithHash` (`defaultStableHash`, `defaultCanaryHash`, the
managed-by annotation), `SetWeight` / `reconcileVirtualRouter` / `reconcileRoute` /
`GetRouteRule` (route filter, the four route types, targets in the Rollout's namespace),
`resource_client.go` `GetVirtualRouterCRForVirtualService`; `appmesh.k8s.aws/v1beta2` from
`utils/defaults/defaults.go`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.cluster.protocol import Cluster
from headway.rollout.plan import HeaderRoute, MirrorRoute, WeightDestination
from headway.routers.control.appmesh import AppMeshReconciler
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import BACKENDS, backend_cluster, crd, stored_rollout, stripped

API = "appmesh.k8s.aws/v1beta2"
CRDS = tuple(
    crd(group="appmesh.k8s.aws", kind=kind, plural=plural, versions=("v1beta2",))
    for kind, plural in (
        ("VirtualService", "virtualservices"),
        ("VirtualRouter", "virtualrouters"),
        ("VirtualNode", "virtualnodes"),
    )
)


def _obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return _obj(
        "VirtualNode",
        name,
        {
            "podSelector": {"matchLabels": labels or {"app": "shop"}},
            "serviceDiscovery": {"dns": {"hostname": f"{name}.default.svc.cluster.local"}},
        },
    )


def _target(node: str, weight: int, namespace: str | None = None) -> dict[str, Any]:
    ref = {"name": node} if namespace is None else {"name": node, "namespace": namespace}
    return {"virtualNodeRef": ref, "weight": weight}


def _route(name: str, kind: str, *targets: dict[str, Any]) -> dict[str, Any]:
    action = {"weightedTargets": list(targets)}
    return {"name": name, kind: {"match": {"prefix": "/"}, "action": action}}


def _mesh(cluster: Cluster, *routes: dict[str, Any]) -> None:
    service = {"provider": {"virtualRouter": {"virtualRouterRef": {"name": "shop-router"}}}}
    cluster.apply(_obj("VirtualService", "shop", service), field_manager="git")
    listeners = [{"portMapping": {"port": 80, "protocol": "http"}}]
    router = {"listeners": listeners, "routes": list(routes)}
    cluster.apply(_obj("VirtualRouter", "shop-router", router), field_manager="git")
    for node in ("shop-stable-vn", "shop-canary-vn"):
        cluster.apply(_node(node), field_manager="git")


@pytest.fixture(params=BACKENDS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    with backend_cluster(request.param, tmp_path, *CRDS) as opened:
        yield opened


def _router(
    cluster: Cluster, rollout: RolloutIdentity, routes: tuple[str, ...] = ()
) -> AppMeshReconciler:
    return AppMeshReconciler(
        cluster,
        rollout=rollout,
        virtual_service="shop",
        routes=routes,
        stable_node="shop-stable-vn",
        canary_node="shop-canary-vn",
    )


def _get(cluster: Cluster, kind: str, name: str) -> dict[str, Any]:
    return stripped(cluster.get(API, kind, name, "default"))


def _weights(cluster: Cluster) -> list[list[int]]:
    routes = _get(cluster, "VirtualRouter", "shop-router")["spec"]["routes"]
    found = []
    for route in routes:
        kind = next(k for k in ("httpRoute", "tcpRoute", "http2Route", "grpcRoute") if k in route)
        found.append([t["weight"] for t in route[kind]["action"]["weightedTargets"]])
    return found


def test_hashes_go_into_each_virtual_node_selector(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    _mesh(cluster, _route("primary", "httpRoute", _target("shop-stable-vn", 100)))
    router = _router(cluster, rollout)

    router.update_hash("", "")  # nothing deployed yet: the placeholders Argo uses
    assert _get(cluster, "VirtualNode", "shop-stable-vn")["spec"]["podSelector"] == {
        "matchLabels": {"app": "shop", "rollouts-pod-template-hash": "stable-hash"}
    }
    router.update_hash("abc", "abc")  # the same hash twice: the canary keeps a placeholder
    assert _get(cluster, "VirtualNode", "shop-canary-vn")["spec"]["podSelector"] == {
        "matchLabels": {"app": "shop", "rollouts-pod-template-hash": "canary-hash"}
    }
    router.update_hash("def", "abc")

    stable = _get(cluster, "VirtualNode", "shop-stable-vn")
    canary = _get(cluster, "VirtualNode", "shop-canary-vn")
    assert stable["metadata"]["annotations"] == {
        "argo-rollouts.argoproj.io/managed-by-rollouts": "shop"
    }
    assert stable["spec"] == {
        **_node("shop-stable-vn")["spec"],
        "podSelector": {"matchLabels": {"app": "shop", "rollouts-pod-template-hash": "abc"}},
    }
    assert canary["spec"]["podSelector"]["matchLabels"]["rollouts-pod-template-hash"] == "def"


def test_weights_land_on_the_two_nodes_in_every_route_type(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    _mesh(
        cluster,
        _route("web", "httpRoute", _target("shop-canary-vn", 0), _target("shop-stable-vn", 100)),
        _route("rpc", "grpcRoute", _target("shop-stable-vn", 100), _target("shop-canary-vn", 0)),
        _route(
            "raw",
            "tcpRoute",
            _target("shop-stable-vn", 90),
            _target("legacy-vn", 10),
            _target("shop-canary-vn", 0, namespace="other"),
        ),
    )
    router = _router(cluster, rollout)

    router.set_weight(30)

    assert _weights(cluster) == [[30, 70], [70, 30], [70, 10, 0]]
    assert router.verify_weight(30) is True
    assert router.verify_weight(40) is False
    route = _get(cluster, "VirtualRouter", "shop-router")["spec"]["routes"][0]
    assert route["httpRoute"]["match"] == {"prefix": "/"}


def test_only_the_named_routes_are_weighed(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    _mesh(
        cluster,
        _route("web", "httpRoute", _target("shop-stable-vn", 100), _target("shop-canary-vn", 0)),
        _route("api", "http2Route", _target("shop-stable-vn", 100), _target("shop-canary-vn", 0)),
    )
    _router(cluster, rollout, ("api",)).set_weight(25)
    assert _weights(cluster) == [[100, 0], [75, 25]]


@pytest.mark.parametrize(
    ("service_spec", "routes", "message"),
    [
        (
            {"provider": {"virtualNode": {"virtualNodeRef": {"name": "x"}}}},
            None,
            "must use a VirtualRouter",
        ),
        (None, [{"name": "web", "udpRoute": {}}], r"spec\.routes\[0\]: needs one of httpRoute"),
        (None, [{"httpRoute": {}}], r"spec\.routes\[0\]\.name: not well-formed"),
        (
            None,
            [_route("web", "httpRoute", {"virtualNodeRef": {"name": "a"}, "weight": "x"})],
            r"weightedTargets\[0\]\.weight: not well-formed",
        ),
    ],
)
def test_what_it_cannot_steer_is_an_error_naming_the_field(
    cluster: Cluster, service_spec: dict[str, Any] | None, routes: Any, message: str
) -> None:
    rollout = stored_rollout(cluster)
    _mesh(cluster, *(routes or [_route("web", "httpRoute", _target("shop-stable-vn", 100))]))
    if service_spec is not None:
        cluster.apply(_obj("VirtualService", "shop", service_spec), field_manager="git")
    with pytest.raises(TrafficRoutingError, match=message):
        _router(cluster, rollout).set_weight(10)


def test_header_mirror_and_experiment_routes_are_refused(cluster: Cluster) -> None:
    router = _router(cluster, stored_rollout(cluster))
    with pytest.raises(TrafficRoutingError, match="AppMesh router has no header routes"):
        router.set_header_route(HeaderRoute(name="qa", match=()))
    with pytest.raises(TrafficRoutingError, match="AppMesh router cannot mirror"):
        router.set_mirror_route(MirrorRoute(name="shadow", match=()))
    template = WeightDestination(service_name="shop-exp", pod_template_hash="abc", weight=10)
    with pytest.raises(TrafficRoutingError, match="AppMesh router cannot send traffic"):
        router.set_weight(10, [template])
