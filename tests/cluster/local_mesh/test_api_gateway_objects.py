"""What the local mesh realizes from Ambassador Mappings and APISIX routes.

The objects are shaped as the control-plane reconcilers write them (tests/routers/control/
test_ambassador.py, test_apisix.py), so the weight the Rollout controller sets is the one the
mesh's router applies.
"""

from __future__ import annotations

from typing import Any

import pytest

from headway.cluster.local.mesh.api_gateway_objects import (
    mapping_service,
    plan_ambassador_mapping,
    plan_apisix_route,
)
from headway.cluster.local.mesh.plan import HeaderCondition, MeshPlanError, ServiceRef

ROLES = ("shop-stable", "shop-canary")
STABLE = ServiceRef("shop-stable", "default")
CANARY = ServiceRef("shop-canary", "default")


def _mapping(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"prefix": "/", **spec}}


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        ("shop-stable", STABLE),
        ("shop-stable:8080", STABLE),
        ("http://shop-stable.other:80", ServiceRef("shop-stable", "other")),
        ("shop-stable.other.svc.cluster.local:80", ServiceRef("shop-stable", "other")),
    ],
)
def test_a_mapping_service_names_a_service(service: str, expected: ServiceRef) -> None:
    assert mapping_service(_mapping("shop", service=service)) == expected


def test_the_canary_mapping_takes_its_weight_and_the_base_the_rest() -> None:
    base = _mapping("shop", service="shop-stable:80")
    plan = plan_ambassador_mapping(
        base, _mapping("shop-canary", service="shop-canary:80", weight=30)
    )
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 30)
    assert plan_ambassador_mapping(base, None).canary is None
    assert plan_ambassador_mapping(base, None).stable_weight == 100


def test_a_bad_mapping_names_the_field() -> None:
    with pytest.raises(MeshPlanError, match=r"^spec\.service: required string"):
        plan_ambassador_mapping(_mapping("shop"), None)
    canary = _mapping("shop-canary", service="shop-canary", weight=300)
    with pytest.raises(MeshPlanError, match=r"^Mapping shop-canary spec\.weight"):
        plan_ambassador_mapping(_mapping("shop", service="shop-stable"), canary)


def _route(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"http": rules}}


def _rule(name: str, backends: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "backends": backends, **extra}


def test_apisix_split_of_the_named_rule_with_default_weights() -> None:
    route = _route(
        "shop",
        [
            _rule("other", [{"serviceName": "other"}]),
            _rule("shop", [{"serviceName": "shop-canary"}, {"serviceName": "shop-stable"}]),
        ],
    )
    plan = plan_apisix_route(route, rule_names=["shop"], header_routes=[], roles=ROLES)
    assert (plan.stable, plan.canary, plan.canary_weight) == (STABLE, CANARY, 50)


def test_apisix_managed_route_is_a_header_route_to_the_canary() -> None:
    backends = [
        {"serviceName": "shop-stable", "weight": 80},
        {"serviceName": "shop-canary", "weight": 20},
    ]
    expr = {"subject": {"scope": "Header", "name": "X-QA"}, "op": "Equal", "value": "yes"}
    managed = _route(
        "qa",
        [_rule("shop", [{"serviceName": "shop-canary", "weight": 100}], match={"exprs": [expr]})],
    )
    two = _route(
        "two",
        [_rule("shop", managed["spec"]["http"][0]["backends"], match={"exprs": [expr, expr]})],
    )
    plan = plan_apisix_route(
        _route("shop", [_rule("shop", backends)]),
        rule_names=["shop"],
        header_routes=[managed, two],
        roles=ROLES,
    )
    assert plan.canary_weight == 20
    assert [(r.name, r.conditions, r.service) for r in plan.header_rules] == [
        ("qa", (HeaderCondition("x-qa", "yes", "exact"),), CANARY)
    ]
    assert plan.unsupported == (
        "ApisixRoute two spec.http[shop].match.exprs: exactly one expression is realized",
    )


def test_apisix_route_without_the_rule_names_it() -> None:
    with pytest.raises(MeshPlanError, match=r"spec\.http: no rule named 'shop'"):
        plan_apisix_route(_route("shop", []), rule_names=["shop"], header_routes=[], roles=ROLES)
