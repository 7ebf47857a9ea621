"""What the local mesh realizes from an App Mesh VirtualService: the weighted targets of its
VirtualRouter's route, each VirtualNode reached through its DNS service discovery, as the
App Mesh reconciler (tests/routers/control/test_appmesh.py) leaves them."""

from __future__ import annotations

from typing import Any

import pytest

from headway.cluster.local.mesh.app_mesh_objects import plan_app_mesh_service
from headway.cluster.local.mesh.plan import MeshPlanError, ServiceRef

ROLES = ("shop-stable-vn", "shop-canary-vn")


def _obj(kind: str, name: str, spec: dict[str, Any], namespace: str = "default") -> Any:
    return {"kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _node(name: str, host: str) -> Any:
    return _obj("VirtualNode", name, {"serviceDiscovery": {"dns": {"hostname": host}}})


def _objects(*routes: Any, nodes: tuple[Any, ...] = ()) -> dict[tuple[str, str, str], Any]:
    router = _obj("VirtualRouter", "shop-router", {"routes": list(routes)})
    found = nodes or (
        _node("shop-stable-vn", "shop-stable.default.svc.cluster.local"),
        _node("shop-canary-vn", "shop-canary"),
    )
    return {(o["kind"], "default", o["metadata"]["name"]): o for o in (router, *found)}


def _route(name: str, kind: str, weights: dict[str, int]) -> Any:
    targets = [{"virtualNodeRef": {"name": n}, "weight": w} for n, w in weights.items()]
    return {"name": name, kind: {"action": {"weightedTargets": targets}}}


SERVICE = _obj(
    "VirtualService",
    "shop",
    {"provider": {"virtualRouter": {"virtualRouterRef": {"name": "shop-router"}}}},
)


def test_the_named_route_splits_between_the_nodes_services() -> None:
    objects = _objects(
        _route("web", "httpRoute", {"shop-canary-vn": 1, "shop-stable-vn": 3}),
        _route("rpc", "grpcRoute", {"shop-canary-vn": 50, "shop-stable-vn": 50}),
    )
    plan = plan_app_mesh_service(SERVICE, objects, route_names=["rpc"], roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (
        ServiceRef("shop-stable", "default"),
        ServiceRef("shop-canary", "default"),
        50,
    )
    scaled = plan_app_mesh_service(SERVICE, objects, route_names=[], roles=ROLES)
    assert scaled.canary_weight == 25  # relative weights 1:3, the first route by default
    assert scaled.unsupported == (
        "VirtualRouter shop-router spec.routes[rpc]: not realized",
        "split weights add up to 4, not 100: scaled to 100",
    )


def test_a_virtual_node_provider_is_its_service_alone() -> None:
    service = _obj(
        "VirtualService", "shop", {"provider": {"virtualNode": {"virtualNodeRef": {"name": "n"}}}}
    )
    plan = plan_app_mesh_service(
        service, _objects(nodes=(_node("n", "shop-direct"),)), route_names=[], roles=None
    )
    assert (plan.stable, plan.canary) == (ServiceRef("shop-direct", "default"), None)


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ({}, r"virtualRouterRef: VirtualRouter default/shop-router not found"),
        (_objects(_route("web", "udpRoute", {})), r"spec\.routes\[web\]: needs one of"),
        (
            _objects(
                _route("web", "httpRoute", {"shop-stable-vn": 100}),
                nodes=(
                    _obj(
                        "VirtualNode", "shop-stable-vn", {"serviceDiscovery": {"awsCloudMap": {}}}
                    ),
                ),
            ),
            r"spec\.serviceDiscovery: only dns is realized locally \(not awsCloudMap\)",
        ),
        (
            _objects(_route("web", "httpRoute", {"gone-vn": 100})),
            "VirtualNode default/gone-vn: not found",
        ),
    ],
)
def test_what_cannot_be_realized_names_the_object_and_field(objects: Any, message: str) -> None:
    with pytest.raises(MeshPlanError, match=message):
        plan_app_mesh_service(SERVICE, objects, route_names=[], roles=ROLES)
