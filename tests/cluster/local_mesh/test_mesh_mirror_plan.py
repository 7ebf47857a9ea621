"""The local mesh's reading of Istio mirror routes (what Argo's `setMirrorRoute` writes, and a
user's own `mirror`): which requests are copied, to whom, at what share, and what is said
when the mesh serves a mirror route differently from Istio."""

from __future__ import annotations

from typing import Any

from cluster.local_mesh.test_mesh_plan import header_route, split, vs
from headway.cluster.local.mesh.plan import (
    HeaderCondition,
    MirrorRule,
    ServiceRef,
    plan_virtual_service,
)
from headway.cluster.local.mesh.plane import PlaneMirror, plane_config

ROLES = ("checkout-stable", "checkout-canary")


def mirror_route(match: list[dict[str, Any]], weights: tuple[int, int] = (80, 20)) -> Any:
    """Shaped as argo-rollouts istio.go `createMirrorRoute` writes it."""
    route = split(("checkout-stable", weights[0]), ("checkout-canary", weights[1]), name="shadow")
    return {
        **route,
        "match": match,
        "mirror": {"host": "checkout-canary", "port": {"number": 80}},
        "mirrorPercentage": {"value": 50},
    }


def test_an_argo_mirror_route_becomes_a_mirror_rule_beside_the_split() -> None:
    match = [
        {"method": {"exact": "POST"}, "uri": {"prefix": "/color"}},
        {"headers": {"X-Shadow": {"regex": "y.*"}}},
    ]
    plan = plan_virtual_service(
        vs(mirror_route(match), split(("checkout-stable", 80), ("checkout-canary", 20))),
        roles=ROLES,
    )
    assert plan.unsupported == ()
    assert (plan.canary_weight, plan.header_rules) == (20, ())
    assert plan.mirror_rules == (
        MirrorRule(
            "shadow",
            (
                (
                    HeaderCondition(":method", "POST", "exact"),
                    HeaderCondition(":path", "/color", "prefix"),
                ),
                (HeaderCondition("x-shadow", "y.*", "regex"),),
            ),
            50.0,
        ),
    )
    config = plane_config(plan, namespace="shop", endpoints=lambda ref: ())
    assert config.mirror_routes == (PlaneMirror("shadow", plan.mirror_rules[0].matches, 50.0),)


def test_a_mirror_on_a_one_destination_split_makes_its_service_the_canary() -> None:
    """A user's own Istio `mirror` on the catch-all: every request, 100 % by default."""
    catch_all = {**split(("checkout-stable", None)), "mirror": {"host": "checkout-next"}}
    plan = plan_virtual_service(vs(catch_all), roles=None)
    assert plan.canary == ServiceRef("checkout-next", "shop")
    assert plan.canary_weight == 0
    assert plan.mirror_rules == (MirrorRule("primary", ((),), 100.0),)


def test_what_the_mesh_serves_differently_is_said() -> None:
    elsewhere = {**mirror_route([{"uri": {"exact": "/a"}}]), "mirror": {"host": "audit"}}
    stale = mirror_route([{"uri": {"exact": "/b"}}], weights=(100, 0))
    stale["name"] = "stale"
    queried = mirror_route([{"queryParams": {"a": {"exact": "1"}}}])
    queried["name"] = "queried"
    plan = plan_virtual_service(
        vs(
            elsewhere,
            stale,
            queried,
            header_route("beta", "checkout-canary", x_beta={"exact": "1"}),
            split(("checkout-stable", 80), ("checkout-canary", 20)),
        ),
        roles=ROLES,
    )
    assert [rule.name for rule in plan.mirror_rules] == ["stale"]
    assert plan.unsupported == (
        "spec.http[2].match[0]: matching on queryParams is not implemented",
        "spec.http[3]: below a mirror route; a request matching both is header-routed "
        "(the local mesh tries header routes first)",
        "spec.http[0].mirror: mirrors to audit; the local mesh mirrors only to the split's "
        "canary (checkout-canary)",
        "spec.http[1].route: differs from the split; its requests are served by the split",
    )
