"""The APISIX reconciler writes backend weights and managed header routes as Argo Rollouts
does, on the store and through the Kubernetes backend.

Expected objects checked against argo-rollouts `rollout/trafficrouting/apisix/apisix.go`:
`SetWeight` / `processSetWeightRoutes` / `GetHttpRoute` / `GetBackends` / `setBackendWeight`
for weights; `SetHeaderRoute` / `makeSetHeaderRoute` (a copy of the user's route, controlled
by the Rollout) / `processSetHeaderApisixRoute` (canary at 100, stable removed,
`processRulePriority` on creation) / `setApisixRuleMatch` / `apisixExprs` for header routes;
`RemoveManagedRoutes`; the API version from `utils/defaults/defaults.go`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.rollout.plan import HeaderRoute, MirrorRoute, WeightDestination
from headway.routers.control.apisix import ApisixReconciler
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingError
from routers.control.helpers import BACKENDS, backend_cluster, crd, stored_rollout, stripped

API = "apisix.apache.org/v2"
ROUTE_CRD = crd(
    group="apisix.apache.org", kind="ApisixRoute", plural="apisixroutes", versions=("v2",)
)


def _rule(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "match": {"paths": ["/*"], "hosts": ["shop.example"]},
        "backends": [
            {"serviceName": "shop-stable", "servicePort": 80},
            {"serviceName": "shop-canary", "servicePort": 80},
        ],
        **extra,
    }


def _route(*rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ApisixRoute",
        "metadata": {"name": "shop-route", "namespace": "default", "labels": {"team": "shop"}},
        "spec": {"http": list(rules) or [_rule("shop")]},
    }


@pytest.fixture(params=BACKENDS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    with backend_cluster(request.param, tmp_path, ROUTE_CRD) as opened:
        yield opened


def _router(
    cluster: Cluster, rollout: RolloutIdentity, rules: tuple[str, ...] = ("shop",)
) -> ApisixReconciler:
    return ApisixReconciler(
        cluster,
        rollout=rollout,
        route="shop-route",
        rules=rules,
        stable_service="shop-stable",
        canary_service="shop-canary",
        managed_routes=("qa", "beta"),
    )


def _get(cluster: Cluster, name: str = "shop-route") -> dict[str, Any]:
    return stripped(cluster.get(API, "ApisixRoute", name, "default"))


def _absent(cluster: Cluster, name: str) -> bool:
    try:
        cluster.get(API, "ApisixRoute", name, "default")
    except NotFound:
        return True
    return False


def _weights(rule: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(b["serviceName"], b.get("weight")) for b in rule["backends"]]


def test_weights_land_on_every_named_rule_only(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(_rule("shop"), _rule("admin"), _rule("api")), field_manager="git")
    router = _router(cluster, rollout, ("shop", "api"))

    router.set_weight(20)

    rules = _get(cluster)["spec"]["http"]
    assert [_weights(r) for r in rules] == [
        [("shop-stable", 80), ("shop-canary", 20)],
        [("shop-stable", None), ("shop-canary", None)],
        [("shop-stable", 80), ("shop-canary", 20)],
    ]
    assert rules[0]["match"] == {"paths": ["/*"], "hosts": ["shop.example"]}
    assert router.verify_weight(20) is True
    assert router.verify_weight(40) is False


def test_the_default_rule_is_named_like_the_route(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(_rule("shop-route")), field_manager="git")
    _router(cluster, rollout, ()).set_weight(5)
    assert _weights(_get(cluster)["spec"]["http"][0]) == [("shop-stable", 95), ("shop-canary", 5)]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([_rule("shop"), {"backends": []}], None),  # found before the nameless rule
        ([{"backends": []}, _rule("shop")], r"spec\.http\[0\]\.name not found"),
        ([_rule("other")], "http rule 'shop' not found"),
        ([{"name": "shop"}], "rule 'shop' has no backends"),
        (
            [{"name": "shop", "backends": [{"serviceName": "shop-stable"}]}],
            "rule 'shop' has no backend 'shop-canary'",
        ),
    ],
)
def test_a_route_it_cannot_steer_is_an_error_naming_the_field(
    cluster: Cluster, rules: list[dict[str, Any]], message: str | None
) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(*rules), field_manager="git")
    router = _router(cluster, rollout)
    if message is None:
        router.set_weight(10)
        return
    with pytest.raises(TrafficRoutingError, match=message):
        router.set_weight(10)


def test_a_header_route_is_a_managed_copy_with_the_canary_only(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(_rule("shop", priority=3), _rule("admin")), field_manager="git")
    router = _router(cluster, rollout)
    router.set_weight(10)
    match = (
        {"headerName": "x-qa", "headerValue": {"exact": "yes"}},
        {"headerName": "x-team", "headerValue": {"prefix": "pay"}},
        {"headerName": "x-id", "headerValue": {"regex": "^[0-9]+$"}},
    )

    router.set_header_route(HeaderRoute(name="qa", match=match))

    managed = _get(cluster, "qa")
    assert managed["metadata"] == {
        "name": "qa",
        "namespace": "default",
        "labels": {"team": "shop"},
        "ownerReferences": [rollout.owner_reference()],
    }
    shop, admin = managed["spec"]["http"]
    assert shop == {
        "name": "shop",
        "priority": 4,
        "match": {
            "paths": ["/*"],
            "hosts": ["shop.example"],
            "exprs": [
                {"subject": {"scope": "Header", "name": "x-qa"}, "op": "Equal", "value": "yes"},
                {
                    "subject": {"scope": "Header", "name": "x-team"},
                    "op": "RegexMatch",
                    "value": "^pay.*",
                },
                {
                    "subject": {"scope": "Header", "name": "x-id"},
                    "op": "RegexMatch",
                    "value": "^[0-9]+$",
                },
            ],
        },
        "backends": [{"serviceName": "shop-canary", "servicePort": 80, "weight": 100}],
    }
    assert admin == {**_rule("admin")}  # not a named rule: copied as it was
    assert _weights(_get(cluster)["spec"]["http"][0]) == [("shop-stable", 90), ("shop-canary", 10)]


def test_a_header_route_is_edited_in_place_then_deleted(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(), field_manager="git")
    router = _router(cluster, rollout)
    first = ({"headerName": "x-qa", "headerValue": {"exact": "yes"}},)
    router.set_header_route(HeaderRoute(name="qa", match=first))
    again = ({"headerName": "x-qa", "headerValue": {"exact": "again"}},)

    router.set_header_route(HeaderRoute(name="qa", match=again))

    rule = _get(cluster, "qa")["spec"]["http"][0]
    assert rule["priority"] == 1  # raised once, when created
    assert rule["match"]["exprs"] == [
        {"subject": {"scope": "Header", "name": "x-qa"}, "op": "Equal", "value": "again"}
    ]
    router.set_header_route(HeaderRoute(name="qa", match=()))
    assert _absent(cluster, "qa")
    router.set_header_route(HeaderRoute(name="qa", match=()))  # none there: nothing to do


def test_managed_routes_are_removed_at_the_end_but_not_foreign_ones(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(), field_manager="git")
    foreign = {**_route(), "metadata": {"name": "beta", "namespace": "default"}}
    cluster.apply(foreign, field_manager="git")
    router = _router(cluster, rollout)
    router.set_header_route(
        HeaderRoute(name="qa", match=({"headerName": "x-qa", "headerValue": {"exact": "1"}},))
    )

    with pytest.raises(TrafficRoutingError, match="duplicate ApisixRoute 'beta'"):
        router.set_header_route(
            HeaderRoute(name="beta", match=({"headerName": "x", "headerValue": {"exact": "1"}},))
        )
    router.remove_managed_routes()

    assert _absent(cluster, "qa")
    assert not _absent(cluster, "beta")
    assert not _absent(cluster, "shop-route")


def test_mirror_routes_are_refused(cluster: Cluster) -> None:
    with pytest.raises(TrafficRoutingError, match="APISIX router cannot mirror"):
        _router(cluster, stored_rollout(cluster)).set_mirror_route(
            MirrorRoute(name="shadow", match=({"method": {"exact": "GET"}},))
        )


def test_experiment_destinations_are_refused(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_route(), field_manager="git")
    template = WeightDestination(service_name="shop-exp", pod_template_hash="abc", weight=10)
    with pytest.raises(TrafficRoutingError, match=r"APISIX router cannot .*\(shop-exp\)"):
        _router(cluster, rollout).set_weight(20, [template])
    assert _weights(_get(cluster)["spec"]["http"][0]) == [
        ("shop-stable", None),
        ("shop-canary", None),
    ]
