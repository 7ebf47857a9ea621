"""The ALB reconciler writes the load balancer controller's action annotation as Argo does.

Expected annotations checked against argo-rollouts `rollout/trafficrouting/alb/alb.go`
(`getForwardActionString`, `getDesiredAnnotations`, `modifyManagedAnnotation`) and
`utils/ingress/ingress.go` (`ALBAction`, `ALBTargetGroup`, `ManagedAnnotations`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import HeaderRoute
from headway.routers.control.alb import ALBReconciler
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import local_cluster, stored_rollout

API = "networking.k8s.io/v1"
MANAGED = "rollouts.argoproj.io/managed-alb-annotations"
INGRESS: dict[str, Any] = {
    "apiVersion": API,
    "kind": "Ingress",
    "metadata": {
        "name": "shop",
        "namespace": "default",
        "annotations": {
            "alb.ingress.kubernetes.io/scheme": "internet-facing",
            MANAGED: '{"billing":["alb.ingress.kubernetes.io/actions.billing"]}',
        },
    },
    "spec": {
        "rules": [
            {
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {
                                "service": {"name": "shop", "port": {"name": "use-annotation"}}
                            },
                        }
                    ]
                }
            }
        ]
    },
}


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    c = local_cluster(tmp_path, clock)
    c.apply(INGRESS, field_manager="git")
    return c


def _router(cluster: LocalCluster, **extra: Any) -> ALBReconciler:
    return ALBReconciler(
        cluster,
        rollout=stored_rollout(cluster),
        ingresses=["shop"],
        stable_service="shop-stable",
        canary_service="shop-canary",
        service_port=8080,
        **extra,
    )


def test_weight_goes_to_the_root_service_action_and_is_recorded(cluster: LocalCluster) -> None:
    router = _router(cluster, root_service="shop")
    router.set_weight(10)
    written = cluster.get(API, "Ingress", "shop", "default")
    assert written["metadata"]["annotations"] == {
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
        "alb.ingress.kubernetes.io/actions.shop": (
            '{"Type":"forward","ForwardConfig":{"TargetGroups":['
            '{"ServiceName":"shop-canary","ServicePort":"8080","Weight":10},'
            '{"ServiceName":"shop-stable","ServicePort":"8080","Weight":90}]}}'
        ),
        MANAGED: (
            '{"billing":["alb.ingress.kubernetes.io/actions.billing"],'
            '"shop":["alb.ingress.kubernetes.io/actions.shop"]}'
        ),
    }
    assert written["spec"] == INGRESS["spec"]
    assert router.verify_weight(10) is True
    assert router.verify_weight(20) is False


def test_stickiness_is_written_after_the_target_groups(cluster: LocalCluster) -> None:
    router = _router(cluster, root_service="shop", stickiness_seconds=3600)
    router.set_weight(0)
    action = cluster.get(API, "Ingress", "shop", "default")["metadata"]["annotations"][
        "alb.ingress.kubernetes.io/actions.shop"
    ]
    assert action.endswith(
        '"Weight":100}],"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":3600}}}'
    )
    with pytest.raises(TrafficRoutingError, match="between 1 and 604800"):
        _router(cluster, root_service="shop", stickiness_seconds=0).set_weight(5)


def test_an_ingress_without_the_action_service_is_refused(cluster: LocalCluster) -> None:
    with pytest.raises(TrafficRoutingError, match="does not have service 'shop-stable' in rules"):
        _router(cluster).set_weight(10)


QA_PATH = {
    "path": "/*",
    "pathType": "ImplementationSpecific",
    "backend": {"service": {"name": "qa", "port": {"name": "use-annotation"}}},
}


def test_header_route_writes_action_conditions_and_a_first_path_then_removes_them(
    cluster: LocalCluster,
) -> None:
    """As `getDesiredHeaderAnnotations`, `CreateAnnotationBasedPath` and `SortHttpPaths` do:
    two exact values of one header gather into one condition; the route's path goes first."""
    router = _router(cluster, root_service="shop", managed_routes=["qa"])
    router.set_weight(10)
    weighted = cluster.get(API, "Ingress", "shop", "default")
    match = (
        {"headerName": "x-qa", "headerValue": {"exact": "yes"}},
        {"headerName": "x-qa", "headerValue": {"exact": "also"}},
    )
    router.set_header_route(HeaderRoute("qa", match))
    written = cluster.get(API, "Ingress", "shop", "default")
    annotations = written["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/actions.qa"] == (
        '{"Type":"forward","ForwardConfig":{"TargetGroups":['
        '{"ServiceName":"shop-canary","ServicePort":"8080","Weight":100}]}}'
    )
    assert annotations["alb.ingress.kubernetes.io/conditions.qa"] == (
        '[{"field":"http-header","httpHeaderConfig":'
        '{"httpHeaderName":"x-qa","values":["yes","also"]}}]'
    )
    assert annotations[MANAGED] == (
        '{"billing":["alb.ingress.kubernetes.io/actions.billing"],'
        '"shop":["alb.ingress.kubernetes.io/actions.shop",'
        '"alb.ingress.kubernetes.io/actions.qa","alb.ingress.kubernetes.io/conditions.qa"]}'
    )
    paths = written["spec"]["rules"][0]["http"]["paths"]
    assert paths == [QA_PATH, *INGRESS["spec"]["rules"][0]["http"]["paths"]]

    router.remove_managed_routes()
    removed = cluster.get(API, "Ingress", "shop", "default")
    assert removed["metadata"]["annotations"] == weighted["metadata"]["annotations"]
    assert removed["spec"] == INGRESS["spec"]


def test_header_route_without_match_removes_it_and_prefix_is_refused(
    cluster: LocalCluster,
) -> None:
    router = _router(cluster, root_service="shop", managed_routes=["qa"])
    exact = ({"headerName": "x-qa", "headerValue": {"exact": "yes"}},)
    router.set_header_route(HeaderRoute("qa", exact))
    router.set_header_route(HeaderRoute("qa", ()))
    written = cluster.get(API, "Ingress", "shop", "default")
    assert "alb.ingress.kubernetes.io/conditions.qa" not in written["metadata"]["annotations"]
    assert written["spec"] == INGRESS["spec"]
    prefix = ({"headerName": "x-qa", "headerValue": {"prefix": "y"}},)
    with pytest.raises(TrafficRoutingError, match="header x-qa needs an exact value"):
        router.set_header_route(HeaderRoute("qa", prefix))
