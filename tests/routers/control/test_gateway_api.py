"""The Gateway API reconciler sets HTTPRoute weights as the Argo Rollouts gatewayAPI plugin does.

Expected objects checked against argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi
`pkg/plugin/httproute.go` (`setHTTPRouteWeight`, `isHTTPManagedRule`), `pkg/plugin/labels.go`
(`ensureInProgressLabel`) and `internal/defaults/defaults.go`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.rollout.routers import traffic_routers
from headway.rollout.plan import HeaderRoute
from headway.routers.control.gateway_api import GatewayAPIReconciler
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import crd, local_cluster

API = "gateway.networking.k8s.io/v1"
ROUTE_CRD = crd(
    group="gateway.networking.k8s.io", kind="HTTPRoute", plural="httproutes", versions=("v1",)
)


def _ref(name: str, weight: int | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": name, "port": 80}
    if weight is not None:
        ref["weight"] = weight
    return ref


def _route(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "HTTPRoute",
        "metadata": {"name": "shop", "namespace": "edge", "labels": {"team": "shop"}},
        "spec": {"parentRefs": [{"name": "public"}], "rules": rules},
    }


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    c = local_cluster(tmp_path, clock, ROUTE_CRD)
    c.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "edge"}}, field_manager="t"
    )
    return c


def _router(cluster: LocalCluster) -> GatewayAPIReconciler:
    return GatewayAPIReconciler(
        cluster,
        namespace="edge",
        http_routes=["shop"],
        stable_service="shop-stable",
        canary_service="shop-canary",
        managed_routes=["qa"],
    )


def test_weights_on_every_unmanaged_rule_and_the_in_progress_label(cluster: LocalCluster) -> None:
    header_rule = {
        "name": "qa",
        "matches": [{"headers": [{"name": "x-qa", "value": "1"}]}],
        "backendRefs": [_ref("shop-canary")],
    }
    api_rule = {
        "matches": [{"path": {"type": "PathPrefix", "value": "/api"}}],
        "backendRefs": [_ref("shop-stable", 100), _ref("shop-canary", 0)],
    }
    web_rule = {"backendRefs": [_ref("shop-stable"), _ref("shop-canary")]}
    cluster.apply(_route([header_rule, api_rule, web_rule]), field_manager="git")
    router = _router(cluster)
    router.set_weight(30)
    written = cluster.get(API, "HTTPRoute", "shop", "edge")
    assert written["metadata"]["labels"] == {
        "team": "shop",
        "rollouts.argoproj.io/gatewayapi-canary": "in-progress",
    }
    assert written["spec"]["rules"] == [
        header_rule,
        {**api_rule, "backendRefs": [_ref("shop-stable", 70), _ref("shop-canary", 30)]},
        {"backendRefs": [_ref("shop-stable", 70), _ref("shop-canary", 30)]},
    ]
    assert router.verify_weight(30) is True
    assert router.verify_weight(40) is False
    router.set_weight(0)
    assert cluster.get(API, "HTTPRoute", "shop", "edge")["metadata"]["labels"] == {"team": "shop"}


def test_a_route_without_the_canary_backend_is_refused(cluster: LocalCluster) -> None:
    cluster.apply(_route([{"backendRefs": [_ref("shop-stable", 100)]}]), field_manager="git")
    with pytest.raises(TrafficRoutingError, match="HTTPRoute edge/shop: no backendRef shop-canary"):
        _router(cluster).set_weight(10)
    with pytest.raises(TrafficRoutingError, match="no rule has both backendRefs"):
        _router(cluster).set_header_route(
            HeaderRoute("qa", ({"headerName": "x", "headerValue": {"exact": "1"}},))
        )


def _config_map(cluster: LocalCluster) -> Any:
    return cluster.get("v1", "ConfigMap", "argo-gatewayapi-configmap", "edge")["data"]


def test_a_header_route_is_a_rule_appended_and_recorded_then_removed(cluster: LocalCluster) -> None:
    """setHTTPHeaderRoute: a rule to the canary with the base rule's path, query and filters
    and the step's headers; its index in the plugin's ConfigMap; removed by index."""
    filters = [
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {"set": [{"name": "a", "value": "b"}]},
        }
    ]
    base = {
        "matches": [
            {
                "path": {"type": "PathPrefix", "value": "/shop"},
                "queryParams": [{"name": "q", "value": "1"}],
            }
        ],
        "filters": filters,
        "backendRefs": [_ref("shop-stable", 100), _ref("shop-canary", 0)],
    }
    cluster.apply(_route([base]), field_manager="git")
    router = _router(cluster)
    match = (
        {"headerName": "x-qa", "headerValue": {"exact": "1"}},
        {"headerName": "x-tier", "headerValue": {"prefix": "gold"}},
    )
    router.set_header_route(HeaderRoute("qa", match))
    router.set_header_route(HeaderRoute("qa", match))  # re-applied: replaced, not appended
    rules = cluster.get(API, "HTTPRoute", "shop", "edge")["spec"]["rules"]
    headers = [
        {"name": "x-qa", "type": "Exact", "value": "1"},
        {"name": "x-tier", "type": "RegularExpression", "value": "gold.*"},
    ]
    assert rules == [
        base,
        {
            "matches": [
                {
                    "path": {"type": "PathPrefix", "value": "/shop"},
                    "queryParams": [{"name": "q", "value": "1"}],
                    "headers": headers,
                }
            ],
            "backendRefs": [{"group": "", "kind": "Service", "name": "shop-canary", "port": 80}],
            "filters": filters,
        },
    ]
    assert _config_map(cluster) == {"httpManagedRoutes": '{"qa": {"shop": 1}}'}
    router.set_weight(20)  # the header rule keeps its single backend unweighted
    assert (
        "weight"
        not in cluster.get(API, "HTTPRoute", "shop", "edge")["spec"]["rules"][1]["backendRefs"][0]
    )

    router.remove_managed_routes()
    assert [
        r.get("backendRefs") for r in cluster.get(API, "HTTPRoute", "shop", "edge")["spec"]["rules"]
    ] == [[_ref("shop-stable", 80), _ref("shop-canary", 20)]]
    assert _config_map(cluster) == {"httpManagedRoutes": "{}"}


def test_a_base_rule_without_matches_gives_a_header_only_match(cluster: LocalCluster) -> None:
    cluster.apply(
        _route([{"backendRefs": [_ref("shop-stable"), _ref("shop-canary")]}]), field_manager="git"
    )
    _router(cluster).set_header_route(
        HeaderRoute("qa", ({"headerName": "x-qa", "headerValue": {"regex": "b.+"}},))
    )
    rule = cluster.get(API, "HTTPRoute", "shop", "edge")["spec"]["rules"][1]
    assert rule["matches"] == [
        {"headers": [{"name": "x-qa", "type": "RegularExpression", "value": "b.+"}]}
    ]


def test_header_rules_go_only_to_routes_that_take_them(cluster: LocalCluster) -> None:
    """The plugin writes header rules to `httpRoute` and to `httpRoutes` entries with
    `useHeaderRoutes: true` (`insertGatewayAPIRouteLists`, `SetHeaderRoute`); the weights go
    to every route."""
    rules = [{"backendRefs": [_ref("shop-stable", 100), _ref("shop-canary", 0)]}]
    cluster.apply(_route(rules), field_manager="git")
    other = _route(rules)
    other["metadata"]["name"] = "shop-internal"
    cluster.apply(other, field_manager="git")
    rollout = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "shop", "namespace": "edge"},
        "spec": {"strategy": {"canary": {
            "stableService": "shop-stable",
            "canaryService": "shop-canary",
            "trafficRouting": {
                "managedRoutes": [{"name": "qa"}],
                "plugins": {"argoproj-labs/gatewayAPI": {"httpRoutes": [
                    {"name": "shop", "useHeaderRoutes": True}, {"name": "shop-internal"},
                ]}},
            },
        }}},
    }
    router = traffic_routers(cluster)(rollout)
    assert router is not None
    router.set_weight(10)
    router.set_header_route(
        HeaderRoute("qa", ({"headerName": "x-qa", "headerValue": {"exact": "1"}},))
    )
    shop = cluster.get(API, "HTTPRoute", "shop", "edge")["spec"]["rules"]
    internal = cluster.get(API, "HTTPRoute", "shop-internal", "edge")["spec"]["rules"]
    assert len(shop) == 2
    assert internal == [{"backendRefs": [_ref("shop-stable", 90), _ref("shop-canary", 10)]}]
