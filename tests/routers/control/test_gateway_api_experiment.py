"""A weighted experiment step through the Gateway API plugin: the templates' Services join the
HTTPRoute with their weights, out of the stable's share, and leave it when the experiment ends
or is aborted, as the plugin's `HandleExperiment` does (rollouts-plugin-trafficrouter-gatewayapi
`pkg/plugin/experiment.go` at 0.15.0, 96c63fd). The route follows the plugin's
`examples/google-cloud-experiment/httproute.yaml` (a rule with the stable and canary
backendRefs, each with a namespace and port 80).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.rollout.routers import traffic_routers
from headway.rollout.plan import WeightDestination
from headway.routers.control.gateway_api import GatewayAPIReconciler
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import crd, local_cluster

API = "gateway.networking.k8s.io/v1"
ROUTE_CRD = crd(
    group="gateway.networking.k8s.io", kind="HTTPRoute", plural="httproutes", versions=("v1",)
)
BASELINE = WeightDestination("demo-exp-baseline", "b1", 10)
CANARY_TEMPLATE = WeightDestination("demo-exp-canary", "c1", 15)
EXTERNAL = {"name": "mirror-sink", "namespace": "demo", "port": 80, "weight": 0}


def _ref(name: str, weight: int) -> dict[str, Any]:
    return {"name": name, "namespace": "demo", "port": 80, "weight": weight}


def _service(name: str, ports: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "demo"},
        "spec": {"ports": ports, "selector": {"app": name}},
    }


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    c = local_cluster(tmp_path, clock, ROUTE_CRD)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
            field_manager="t")
    route = {
        "apiVersion": API,
        "kind": "HTTPRoute",
        "metadata": {"name": "demo-app-route", "namespace": "demo"},
        "spec": {
            "parentRefs": [{"kind": "Gateway", "name": "app-gateway"}],
            "rules": [{"backendRefs": [
                _ref("demo-app-stable", 100), _ref("demo-app-canary", 0), EXTERNAL,
            ]}],
        },
    }
    c.apply(route, field_manager="git")
    # the baseline's Service has a metrics port first: the plugin picks the one named http
    c.apply(_service("demo-exp-baseline", [{"name": "metrics", "port": 9090},
                                           {"name": "http", "port": 80}]), field_manager="t")
    c.apply(_service("demo-exp-canary", [{"name": "web", "port": 8000}]), field_manager="t")
    return c


def _router(cluster: LocalCluster, previous: tuple[str, ...] = ()) -> GatewayAPIReconciler:
    return GatewayAPIReconciler(
        cluster,
        namespace="demo",
        http_routes=["demo-app-route"],
        stable_service="demo-app-stable",
        canary_service="demo-app-canary",
        rollout_namespace="demo",
        previous_additional=previous,
    )


def _refs(cluster: LocalCluster) -> list[dict[str, Any]]:
    route = cluster.get(API, "HTTPRoute", "demo-app-route", "demo")
    return list(route["spec"]["rules"][0]["backendRefs"])


def test_a_running_experiment_adds_the_templates_out_of_the_stables_share(
    cluster: LocalCluster,
) -> None:
    router = _router(cluster)
    router.set_weight(0, (BASELINE, CANARY_TEMPLATE))
    assert _refs(cluster) == [
        _ref("demo-app-stable", 75),
        _ref("demo-app-canary", 0),
        EXTERNAL,
        _ref("demo-exp-baseline", 10),
        {"name": "demo-exp-canary", "namespace": "demo", "port": 8000, "weight": 15},
    ]
    assert router.verify_weight(0, (BASELINE, CANARY_TEMPLATE)) is True
    assert router.verify_weight(0) is False  # the stable has 75, not 100
    assert router.verify_weight(0, (BASELINE, WeightDestination("demo-exp-canary", "c1", 5))) \
        is False


def test_a_canary_weight_and_the_templates_both_come_out_of_the_stable(
    cluster: LocalCluster,
) -> None:
    """The plugin writes the stable 100 - 25 whatever the canary's weight; Headway keeps the
    shares adding up to 100, as `status.canary.weights` reports them."""
    router = _router(cluster)
    router.set_weight(20, (BASELINE, CANARY_TEMPLATE))
    router.set_weight(20, (BASELINE, CANARY_TEMPLATE))  # re-applied: no second ref
    weights = {ref["name"]: ref["weight"] for ref in _refs(cluster)}
    assert weights == {"demo-app-stable": 55, "demo-app-canary": 20, "mirror-sink": 0,
                       "demo-exp-baseline": 10, "demo-exp-canary": 15}
    assert len(_refs(cluster)) == 5


def test_the_ended_experiment_leaves_the_route_and_the_step_weight_holds(
    cluster: LocalCluster,
) -> None:
    _router(cluster).set_weight(0, (BASELINE, CANARY_TEMPLATE))
    after = _router(cluster, previous=("demo-exp-baseline", "demo-exp-canary"))
    after.set_weight(30)
    assert _refs(cluster) == [_ref("demo-app-stable", 70), _ref("demo-app-canary", 30), EXTERNAL]
    assert after.verify_weight(30) is True


def test_an_abort_removes_the_templates_and_leaves_other_backends_alone(
    cluster: LocalCluster,
) -> None:
    """Only Services the previous reconcile routed to are removed (the plugin's fix #204):
    `mirror-sink`, added by someone else, stays with its weight."""
    _router(cluster).set_weight(0, (BASELINE, CANARY_TEMPLATE))
    _router(cluster, previous=("demo-exp-baseline", "demo-exp-canary")).set_weight(0)
    assert _refs(cluster) == [_ref("demo-app-stable", 100), _ref("demo-app-canary", 0), EXTERNAL]


def test_a_template_service_that_does_not_exist_is_an_error(cluster: LocalCluster) -> None:
    missing = WeightDestination("demo-exp-gone", "g1", 10)
    with pytest.raises(TrafficRoutingError, match="Service demo/demo-exp-gone not found"):
        _router(cluster).set_weight(0, (missing,))
    assert _refs(cluster)[0] == _ref("demo-app-stable", 100)  # nothing written


def test_verifying_a_route_without_stable_and_canary_answers_false(
    cluster: LocalCluster,
) -> None:
    """(Before the fix, looking for the experiment rule raised StopIteration here.)"""
    route = cluster.get(API, "HTTPRoute", "demo-app-route", "demo")
    route["spec"]["rules"] = [{"backendRefs": [EXTERNAL]}]
    cluster.apply(route, field_manager="git")
    assert _router(cluster).verify_weight(0, (BASELINE,)) is False


def test_the_controller_builds_the_router_from_the_rollouts_last_weights(
    cluster: LocalCluster,
) -> None:
    """The Services to remove are the ones `status.canary.weights.additional` recorded."""
    _router(cluster).set_weight(0, (BASELINE, CANARY_TEMPLATE))
    rollout = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "demo-app", "namespace": "demo"},
        "spec": {"strategy": {"canary": {
            "stableService": "demo-app-stable",
            "canaryService": "demo-app-canary",
            "trafficRouting": {"plugins": {"argoproj-labs/gatewayAPI": {
                "httpRoute": "demo-app-route", "namespace": "demo"}}},
        }}},
        "status": {"canary": {"weights": {"additional": [
            {"serviceName": "demo-exp-baseline", "weight": 10, "podTemplateHash": "b1"},
            {"serviceName": "demo-exp-canary", "weight": 15, "podTemplateHash": "c1"},
        ]}}},
    }
    router = traffic_routers(cluster)(rollout)
    assert router is not None
    router.set_weight(0)
    assert [ref["name"] for ref in _refs(cluster)] == [
        "demo-app-stable", "demo-app-canary", "mirror-sink",
    ]
