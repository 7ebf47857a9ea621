"""What the local mesh realizes from SMI, Traefik, Gateway API, ALB and NGINX objects.

The objects are the ones the control-plane reconcilers write (tests/routers/control), so
a weight the Rollout controller sets is the weight the mesh's router applies.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from headway.cluster.local.mesh.plan import HeaderCondition, MeshPlanError, ServiceRef
from headway.cluster.local.mesh.router_objects import (
    plan_alb_ingress,
    plan_http_route,
    plan_nginx_ingress,
    plan_traefik_service,
    plan_traffic_split,
)

ROLES = ("shop-stable", "shop-canary")
STABLE = ServiceRef("shop-stable", "default")
CANARY = ServiceRef("shop-canary", "default")


def _meta(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "annotations": annotations or {}}


def test_traffic_split_with_quantity_weights_canary_first() -> None:
    split = {
        "metadata": _meta("shop"),
        "spec": {
            "service": "shop",
            "backends": [
                {"service": "shop-canary", "weight": "20"},
                {"service": "shop-stable", "weight": "80"},
            ],
        },
    }
    plan = plan_traffic_split(split, roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 20)
    split["spec"]["backends"][0]["weight"] = "500m"
    with pytest.raises(MeshPlanError, match=r"spec\.backends\[0\]\.weight"):
        plan_traffic_split(split, roles=ROLES)


def test_traefik_weights_default_to_one_and_are_scaled() -> None:
    service = {
        "metadata": _meta("shop-weighted"),
        "spec": {
            "weighted": {
                "services": [{"name": "shop-stable", "weight": 3}, {"name": "shop-canary"}]
            }
        },
    }
    plan = plan_traefik_service(service, roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 25)


def test_http_route_header_rule_then_split() -> None:
    route = {
        "metadata": _meta("shop"),
        "spec": {
            "rules": [
                {
                    "name": "qa",
                    "matches": [
                        {"headers": [{"name": "X-QA", "value": "^y", "type": "RegularExpression"}]}
                    ],
                    "backendRefs": [{"name": "shop-canary", "port": 80}],
                },
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [
                        {"name": "shop-stable", "port": 80, "weight": 70},
                        {"name": "shop-canary", "port": 80, "weight": 30},
                    ],
                },
            ]
        },
    }
    plan = plan_http_route(route, roles=ROLES)
    assert plan.canary_weight == 30
    assert [(r.name, r.conditions) for r in plan.header_rules] == [
        ("qa", (HeaderCondition("x-qa", "^y", "regex"),))
    ]


def test_alb_action_annotation_is_the_split() -> None:
    action = {
        "Type": "forward",
        "ForwardConfig": {
            "TargetGroups": [
                {"ServiceName": "shop-canary", "ServicePort": "80", "Weight": 10},
                {"ServiceName": "shop-stable", "ServicePort": "80", "Weight": 90},
            ]
        },
    }
    backend = {"service": {"name": "shop", "port": {"name": "use-annotation"}}}
    ingress = {
        "metadata": _meta("shop", {"alb.ingress.kubernetes.io/actions.shop": json.dumps(action)}),
        "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": backend}]}}]},
    }
    plan = plan_alb_ingress(ingress, roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 10)
    ingress["metadata"]["annotations"]["alb.ingress.kubernetes.io/actions.shop"] = "{"
    with pytest.raises(MeshPlanError, match="not JSON"):
        plan_alb_ingress(ingress, roles=ROLES)


def test_alb_header_route_action_with_conditions_is_a_header_route() -> None:
    """The path Argo puts first for a header route does not become the split; its one
    http-header condition is realized, each value matching."""
    split = {
        "Type": "forward",
        "ForwardConfig": {
            "TargetGroups": [
                {"ServiceName": "shop-canary", "ServicePort": "80", "Weight": 10},
                {"ServiceName": "shop-stable", "ServicePort": "80", "Weight": 90},
            ]
        },
    }
    header = {
        "Type": "forward",
        "ForwardConfig": {
            "TargetGroups": [{"ServiceName": "shop-canary", "ServicePort": "80", "Weight": 100}]
        },
    }
    condition = {
        "field": "http-header",
        "httpHeaderConfig": {"httpHeaderName": "X-QA", "values": ["yes", "also"]},
    }
    prefix = "alb.ingress.kubernetes.io"
    annotations = {
        f"{prefix}/actions.shop": json.dumps(split),
        f"{prefix}/actions.qa": json.dumps(header),
        f"{prefix}/conditions.qa": json.dumps([condition]),
    }
    paths = [
        {"path": "/*", "backend": {"service": {"name": "qa", "port": {"name": "use-annotation"}}}},
        {"path": "/", "backend": {"service": {"name": "shop", "port": {"name": "use-annotation"}}}},
    ]
    ingress = {
        "metadata": _meta("shop", annotations),
        "spec": {"rules": [{"http": {"paths": paths}}]},
    }
    plan = plan_alb_ingress(ingress, roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 10)
    assert [(r.name, r.conditions, r.service) for r in plan.header_rules] == [
        (
            "qa",
            (HeaderCondition("x-qa", "yes", "exact"), HeaderCondition("x-qa", "also", "exact")),
            CANARY,
        )
    ]
    assert plan.unsupported == ()
    two = [condition, {**condition, "httpHeaderConfig": {"httpHeaderName": "b", "values": ["1"]}}]
    ingress["metadata"]["annotations"][f"{prefix}/conditions.qa"] = json.dumps(two)
    plan = plan_alb_ingress(ingress, roles=ROLES)
    assert plan.header_rules == ()
    assert "only one http-header condition" in plan.unsupported[0]


def _ingress(name: str, service: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    backend = {"service": {"name": service, "port": {"number": 80}}}
    return {
        "metadata": _meta(name, annotations),
        "spec": {
            "rules": [
                {"host": "shop.example", "http": {"paths": [{"path": "/", "backend": backend}]}}
            ]
        },
    }


def test_nginx_canary_ingress_weight_total_and_header() -> None:
    canary = _ingress(
        "shop-shop-canary",
        "shop-canary",
        {
            "nginx.ingress.kubernetes.io/canary": "true",
            "nginx.ingress.kubernetes.io/canary-weight": "250",
            "nginx.ingress.kubernetes.io/canary-weight-total": "1000",
            "nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
        },
    )
    plan = plan_nginx_ingress(_ingress("shop", "shop-stable"), [canary])
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 25)
    assert plan.header_rules[0].conditions == (HeaderCondition("x-canary", "always", "exact"),)
    canary["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"] = "0"
    assert plan_nginx_ingress(_ingress("shop", "shop-stable"), [canary]).canary_weight == 0


def test_nginx_stable_alone_gets_everything() -> None:
    plan = plan_nginx_ingress(_ingress("shop", "shop-stable"), [])
    assert (plan.stable, plan.canary, plan.stable_weight) == (STABLE, None, 100)
