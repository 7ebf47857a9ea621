"""The pure reading of a VirtualService: which split, which header routes, what is refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headway.cluster.local.mesh.plan import (
    HeaderCondition,
    MeshPlanError,
    ServiceRef,
    parse_host,
    plan_virtual_service,
    split_shares,
)


def vs(*http: dict[str, Any], namespace: str = "shop") -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": "checkout", "namespace": namespace},
        "spec": {"hosts": ["checkout"], "http": list(http)},
    }


def split(*pairs: tuple[str, int | None], name: str = "primary") -> dict[str, Any]:
    route = []
    for host, weight in pairs:
        item: dict[str, Any] = {"destination": {"host": host}}
        if weight is not None:
            item["weight"] = weight
        route.append(item)
    return {"name": name, "route": route}


def header_route(name: str, host: str, **headers: dict[str, str]) -> dict[str, Any]:
    return {
        "name": name,
        "match": [{"headers": {h.replace("_", "-"): spec}} for h, spec in headers.items()],
        "route": [{"destination": {"host": host}, "weight": 100}],
    }


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("web", ServiceRef("web", "shop")),
        ("web.other", ServiceRef("web", "other")),
        ("web.other.svc", ServiceRef("web", "other")),
        ("web.other.svc.cluster.local", ServiceRef("web", "other")),
    ],
)
def test_hosts_name_services(host: str, expected: ServiceRef) -> None:
    assert parse_host(host, "shop", "spec.http[0].route[0].destination") == expected


@pytest.mark.parametrize("host", ["*.example.com", "www.example.com", "a..b", "", 7])
def test_hosts_that_are_not_services_are_refused_with_the_field(host: object) -> None:
    with pytest.raises(MeshPlanError, match=r"^spec\.http\[0\]\.route\[0\]\.destination\.host"):
        parse_host(host, "shop", "spec.http[0].route[0].destination")


def test_the_argo_shaped_split_maps_by_position_without_a_rollout() -> None:
    plan = plan_virtual_service(
        vs(split(("checkout-stable", 90), ("checkout-canary", 10))), roles=None
    )
    assert plan.stable == ServiceRef("checkout-stable", "shop")
    assert plan.canary == ServiceRef("checkout-canary", "shop")
    assert (plan.stable_weight, plan.canary_weight) == (90, 10)
    assert plan.unsupported == ()


def test_the_rollout_decides_which_destination_is_the_canary() -> None:
    plan = plan_virtual_service(
        vs(split(("checkout-canary", 30), ("checkout-stable", 70))),
        roles=("checkout-stable", "checkout-canary"),
    )
    assert plan.stable.name == "checkout-stable"
    assert (plan.stable_weight, plan.canary_weight) == (70, 30)


def test_one_destination_takes_everything() -> None:
    plan = plan_virtual_service(vs(split(("web", None))), roles=None)
    assert (plan.stable.name, plan.canary, plan.stable_weight) == ("web", None, 100)


def test_header_routes_before_the_split_go_to_the_canary() -> None:
    plan = plan_virtual_service(
        vs(
            header_route("canary-header", "checkout-canary", x_canary={"exact": "always"}),
            split(("checkout-stable", 100), ("checkout-canary", 0)),
        ),
        roles=("checkout-stable", "checkout-canary"),
    )
    (rule,) = plan.header_rules
    assert rule.name == "canary-header"
    assert rule.conditions == (HeaderCondition("x-canary", "always", "exact"),)
    assert rule.service.name == "checkout-canary"
    assert plan.canary_weight == 0


def test_a_header_route_gives_a_single_destination_split_its_canary() -> None:
    plan = plan_virtual_service(
        vs(header_route("beta", "web-beta", x_beta={"prefix": "yes"}), split(("web", None))),
        roles=None,
    )
    assert plan.canary == ServiceRef("web-beta", "shop")
    assert (plan.stable_weight, plan.canary_weight) == (100, 0)
    assert plan.header_rules[0].conditions[0].kind == "prefix"


def test_what_cannot_be_realized_is_listed_not_silently_dropped() -> None:
    uri_route = {"name": "api", "match": [{"uri": {"prefix": "/api"}}],
                 "route": [{"destination": {"host": "checkout-canary"}}]}
    to_stable = header_route("pin", "checkout-stable", x_pin={"exact": "1"})
    plan = plan_virtual_service(
        vs(
            uri_route,
            to_stable,
            split(("checkout-stable", 90), ("checkout-canary", 10)),
            split(("checkout-stable", 100), name="late"),
        ),
        roles=None,
    )
    assert plan.header_rules == ()
    assert len(plan.unsupported) == 3
    assert "spec.http[0].match[0]: matching on uri is not implemented" in plan.unsupported
    assert any("'pin' targets checkout-stable" in u for u in plan.unsupported)
    assert "spec.http[3]: after the catch-all route, never reached" in plan.unsupported


def test_two_headers_in_one_match_entry_are_an_and_that_is_not_implemented() -> None:
    route = header_route("both", "c", x_a={"exact": "1"})
    route["match"] = [{"headers": {"x-a": {"exact": "1"}, "x-b": {"exact": "2"}}}]
    plan = plan_virtual_service(vs(route, split(("s", 90), ("c", 10))), roles=None)
    assert plan.header_rules == ()
    assert "exactly one header per match entry" in plan.unsupported[0]


def test_weights_not_adding_up_to_100_are_scaled_and_reported() -> None:
    plan = plan_virtual_service(vs(split(("s", 1), ("c", 1))), roles=None)
    assert (plan.stable_weight, plan.canary_weight) == (50, 50)
    assert "add up to 2, not 100" in plan.unsupported[0]


def test_three_destinations_make_an_additional_one() -> None:
    plan = plan_virtual_service(vs(split(("s", 60), ("c", 30), ("x", 10))), roles=None)
    assert [(a.service.name, a.weight) for a in plan.additional] == [("x", 10)]
    assert plan.stable_weight == 60


@pytest.mark.parametrize(
    ("http", "field"),
    [
        ([], r"spec\.http: at least one"),
        ([header_route("h", "c", x_a={"exact": "1"})], r"spec\.http: no route without `match`"),
        ([split(("s", 0), ("c", 0))], r"add up to 0"),
        ([split(("s", 101))], r"spec\.http\[0\]\.route\[0\]\.weight"),
        ([split(("s", 50), ("s", 50))], r"spec\.http\[0\]\.route\[1\]\.destination\.host"),
        (
            [{"route": [{"destination": {"host": "s", "subset": 5}}]}],
            r"spec\.http\[0\]\.route\[0\]\.destination\.subset: must be a non-empty",
        ),
    ],
)
def test_unrealizable_specs_name_the_field(http: list[dict[str, Any]], field: str) -> None:
    with pytest.raises(MeshPlanError, match=field):
        plan_virtual_service(vs(*http), roles=None)


@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=5).filter(any))
def test_shares_always_add_up_to_100_and_keep_the_order(weights: list[int]) -> None:
    shares = split_shares(weights)
    assert sum(shares) == 100
    for a, b in zip(weights, shares, strict=True):
        for c, d in zip(weights, shares, strict=True):
            if a > c:
                assert b >= d
