"""The Istio reconciler's exact VirtualService edits, on a real store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_rollout_traffic import CRD, VS_API

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.istio import IstioReconciler
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    TrafficRoutingReconciler,
    mirror_refused,
)


def _dest(host: str, weight: int) -> dict[str, Any]:
    return {"destination": {"host": host}, "weight": weight}


def _vs(http: list[dict[str, Any]], name: str = "web", namespace: str = "default") -> Any:
    return {
        "apiVersion": VS_API,
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"http": http},
    }


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    c = LocalCluster(tmp_path / "db", clock)
    c.apply(CRD, field_manager="t")
    return c


def _reconciler(
    cluster: LocalCluster, ref: dict[str, Any], managed: tuple[str, ...] = ()
) -> TrafficRoutingReconciler:
    return IstioReconciler(
        cluster,
        namespace="default",
        virtual_services=[ref],
        stable_service="stable",
        canary_service="canary",
        managed_routes=managed,
    )


def _http(cluster: LocalCluster, name: str = "web", namespace: str = "default") -> Any:
    return cluster.get(VS_API, "VirtualService", name, namespace)["spec"]["http"]


def test_named_routes_get_the_split_others_untouched(cluster: LocalCluster) -> None:
    other = {"name": "other", "route": [_dest("stable", 100), _dest("canary", 0)]}
    cluster.apply(
        _vs(
            [
                {
                    "name": "a",
                    "route": [
                        _dest("stable.default.svc.cluster.local", 100),
                        _dest("canary.default.svc.cluster.local", 0),
                    ],
                },
                other,
            ]
        ),
        field_manager="git",
    )
    router = _reconciler(cluster, {"name": "web", "routes": ["a"]})
    router.set_weight(30)
    assert _http(cluster) == [
        {
            "name": "a",
            "route": [
                _dest("stable.default.svc.cluster.local", 70),
                _dest("canary.default.svc.cluster.local", 30),
            ],
        },
        other,
    ]
    assert router.verify_weight(30) is True and router.verify_weight(40) is False


def test_single_unnamed_route_and_namespaced_name(cluster: LocalCluster) -> None:
    cluster.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mesh"}}, field_manager="t"
    )
    cluster.apply(
        _vs([{"route": [_dest("stable", 100), _dest("canary", 0)]}], namespace="mesh"),
        field_manager="git",
    )
    _reconciler(cluster, {"name": "web.mesh"}).set_weight(100)
    assert _http(cluster, namespace="mesh") == [
        {"route": [_dest("stable", 0), _dest("canary", 100)]}
    ]


@pytest.mark.parametrize(
    ("http", "ref", "message"),
    [
        (
            [{"name": "a", "route": [_dest("stable", 100)]}],
            {"name": "web", "routes": ["a"]},
            "no destination for Service 'canary'",
        ),
        (
            [{"name": "a", "route": []}],
            {"name": "web", "routes": ["b"]},
            "HTTP Route 'b' is not found",
        ),
        ([{"name": "a", "route": []}], {"name": "missing"}, "VirtualService default/missing"),
    ],
)
def test_errors(cluster: LocalCluster, http: Any, ref: dict[str, Any], message: str) -> None:
    cluster.apply(_vs(http), field_manager="git")
    with pytest.raises(TrafficRoutingError, match=message):
        _reconciler(cluster, ref).set_weight(10)


def test_header_routes_are_managed_routes_on_top(cluster: LocalCluster) -> None:
    primary = {
        "name": "primary",
        "route": [
            {"destination": {"host": "stable", "port": {"number": 8080}}, "weight": 100},
            {"destination": {"host": "canary", "port": {"number": 8080}}, "weight": 0},
        ],
    }
    cluster.apply(_vs([primary]), field_manager="git")
    router = _reconciler(cluster, {"name": "web", "routes": ["primary"]}, ("first", "second"))
    router.set_header_route(
        HeaderRoute("second", ({"headerName": "x-b", "headerValue": {"prefix": "b"}},))
    )
    router.set_header_route(
        HeaderRoute("first", ({"headerName": "x-a", "headerValue": {"exact": "a", "regex": ""}},))
    )
    http = _http(cluster)
    assert [r.get("name") for r in http] == ["first", "second", "primary"]
    assert http[0] == {
        "name": "first",
        "match": [{"headers": {"x-a": {"exact": "a"}}}],
        "route": [{"destination": {"host": "canary", "port": {"number": 8080}}, "weight": 100}],
    }
    router.set_header_route(HeaderRoute("first", ()))  # no match: removed
    assert [r.get("name") for r in _http(cluster)] == ["second", "primary"]
    router.remove_managed_routes()
    assert _http(cluster) == [primary]


class _EditedMeanwhile(LocalCluster):
    """A store where someone else edits the VirtualService between the router's read and
    its write: the race window, held open on purpose."""

    def update(
        self,
        obj: Any,
        *,
        field_manager: str = "headway",
        with_status: bool = False,
        dry_run: bool = False,
    ) -> Any:
        if obj.get("kind") == "VirtualService" and field_manager != "someone":
            live = self.get(VS_API, "VirtualService", "web")
            live["metadata"]["annotations"] = {"edited": "meanwhile"}
            super().update(live, field_manager="someone")
        return super().update(
            obj, field_manager=field_manager, with_status=with_status, dry_run=dry_run
        )


def test_a_write_over_a_concurrent_edit_fails_instead_of_losing_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    cluster = _EditedMeanwhile(tmp_path / "db", clock)
    cluster.apply(CRD, field_manager="t")
    cluster.apply(_vs([{"route": [_dest("stable", 100), _dest("canary", 0)]}]), field_manager="git")
    router = _reconciler(cluster, {"name": "web"})
    with pytest.raises(TrafficRoutingError, match="stale"):
        router.set_weight(20)
    live = cluster.get(VS_API, "VirtualService", "web")
    assert live["metadata"]["annotations"] == {"edited": "meanwhile"}
    assert live["spec"]["http"][0]["route"] == [_dest("stable", 100), _dest("canary", 0)]


def test_the_route_list_is_written_whole_and_other_fields_stay(cluster: LocalCluster) -> None:
    vs = _vs([{"route": [_dest("stable", 100), _dest("canary", 0)]}])
    vs["spec"]["gateways"] = ["mesh"]
    vs["metadata"]["labels"] = {"team": "web"}
    cluster.apply(vs, field_manager="git")
    _reconciler(cluster, {"name": "web"}).set_weight(25)
    live = cluster.get(VS_API, "VirtualService", "web")
    assert live["spec"]["gateways"] == ["mesh"]
    assert live["metadata"]["labels"] == {"team": "web"}
    assert live["spec"]["http"] == [{"route": [_dest("stable", 75), _dest("canary", 25)]}]
    owners = {e["manager"]: e["fieldsV1"] for e in live["metadata"]["managedFields"]}
    assert "f:http" in owners["headway-rollouts-controller"]["f:spec"]


def _rule(subsets: list[dict[str, Any]]) -> Any:
    return {
        "apiVersion": VS_API,
        "kind": "DestinationRule",
        "metadata": {"name": "web-dr", "namespace": "default"},
        "spec": {"host": "web", "trafficPolicy": {"tls": {"mode": "DISABLE"}}, "subsets": subsets},
    }


def _subset_reconciler(cluster: LocalCluster) -> IstioReconciler:
    return IstioReconciler(
        cluster,
        namespace="default",
        virtual_services=[{"name": "web"}],
        stable_service="",
        canary_service="",
        managed_routes=("hdr",),
        destination_rule={
            "name": "web-dr",
            "canarySubsetName": "canary",
            "stableSubsetName": "stable",
        },
        rollout_name="web",
    )


def _subset_dest(subset: str, weight: int) -> dict[str, Any]:
    return {
        "destination": {"host": "web", "subset": subset, "port": {"number": 80}},
        "weight": weight,
    }


def test_subsets_get_the_hashes_and_the_split_follows_subsets(cluster: LocalCluster) -> None:
    """Argo's UpdateHash: the hash label on both subsets, the managed-by annotation, other
    labels and fields kept, subsets it does not manage dropped; then SetWeight by subset."""
    cluster.apply(
        _rule(
            [
                {"name": "stable", "labels": {"app": "web"}},
                {"name": "canary", "labels": {"app": "web", "rollouts-pod-template-hash": "x"}},
                {"name": "legacy", "labels": {"app": "old"}},
            ]
        ),
        field_manager="git",
    )
    cluster.apply(
        _vs([{"route": [_subset_dest("stable", 100), _subset_dest("canary", 0)]}]),
        field_manager="git",
    )
    router = _subset_reconciler(cluster)
    router.update_hash("h2", "h1")
    router.set_weight(20)
    rule = cluster.get(VS_API, "DestinationRule", "web-dr", "default")
    assert rule["metadata"]["annotations"] == {
        "argo-rollouts.argoproj.io/managed-by-rollouts": "web"
    }
    assert rule["spec"] == {
        "host": "web",
        "trafficPolicy": {"tls": {"mode": "DISABLE"}},
        "subsets": [
            {"name": "stable", "labels": {"app": "web", "rollouts-pod-template-hash": "h1"}},
            {"name": "canary", "labels": {"app": "web", "rollouts-pod-template-hash": "h2"}},
        ],
    }
    assert _http(cluster) == [{"route": [_subset_dest("stable", 80), _subset_dest("canary", 20)]}]
    assert router.verify_weight(20) is True

    router.set_header_route(
        HeaderRoute("hdr", ({"headerName": "x-canary", "headerValue": {"exact": "yes"}},))
    )
    assert _http(cluster)[0] == {
        "name": "hdr",
        "match": [{"headers": {"x-canary": {"exact": "yes"}}}],
        "route": [
            {
                "destination": {"host": "web", "subset": "canary", "port": {"number": 80}},
                "weight": 100,
            }
        ],
    }

    router.update_hash("", "h1")  # no canary ReplicaSet: the label goes
    labels = [
        s["labels"]
        for s in cluster.get(VS_API, "DestinationRule", "web-dr", "default")["spec"]["subsets"]
    ]
    assert labels == [{"app": "web", "rollouts-pod-template-hash": "h1"}, {"app": "web"}]


def test_a_missing_subset_destination_is_named(cluster: LocalCluster) -> None:
    cluster.apply(_rule([{"name": "stable"}, {"name": "canary"}]), field_manager="git")
    cluster.apply(_vs([{"route": [_subset_dest("stable", 100)]}]), field_manager="git")
    with pytest.raises(TrafficRoutingError, match="no destination for subset 'canary'"):
        _subset_reconciler(cluster).set_weight(10)


def test_a_missing_destination_rule_is_named(cluster: LocalCluster) -> None:
    with pytest.raises(TrafficRoutingError, match="DestinationRule default/web-dr not found"):
        _subset_reconciler(cluster).update_hash("a", "b")


def test_subset_mirror_route_mirrors_to_the_canary_subset(cluster: LocalCluster) -> None:
    """argo-rollouts istio.go `reconcileVirtualServiceMirrorRoutes`: with a DestinationRule the
    mirror goes to the rule's host and the canary subset; `createMirrorRoute` takes the port
    number of the split's first destination and copies the split through its Go types."""
    cluster.apply(_rule([{"name": "stable"}, {"name": "canary"}]), field_manager="git")
    split = [_subset_dest("stable", 70), _subset_dest("canary", 30)]
    split[0]["headers"] = {"request": {"set": {"x-split": "1"}}}  # not in Argo's types: dropped
    cluster.apply(_vs([{"route": split}]), field_manager="git")
    router = IstioReconciler(
        cluster,
        namespace="default",
        virtual_services=[{"name": "web"}],
        stable_service="",
        canary_service="",
        managed_routes=("shadow",),
        destination_rule={
            "name": "web-dr",
            "canarySubsetName": "canary",
            "stableSubsetName": "stable",
        },
    )
    match = ({"path": {"exact": "/checkout", "prefix": ""}, "headers": {"x-u": {"prefix": "q"}}},)
    router.set_mirror_route(MirrorRoute("shadow", match, 25))
    http = _http(cluster)
    assert http[0] == {
        "name": "shadow",
        "match": [{"uri": {"exact": "/checkout"}, "headers": {"x-u": {"prefix": "q"}}}],
        "route": [_subset_dest("stable", 70), _subset_dest("canary", 30)],
        "mirror": {"host": "web", "subset": "canary", "port": {"number": 80}},
        "mirrorPercentage": {"value": 25},
    }
    # No `routes` named: Argo would now weigh only the mirror route (its route names become
    # the mirror's); Headway weighs the user's one unmanaged route and the mirror route.
    router.set_weight(50)
    assert [d["weight"] for d in _http(cluster)[0]["route"]] == [50, 50]
    assert [d["weight"] for d in _http(cluster)[1]["route"]] == [50, 50]
    router.remove_managed_routes()
    assert [r.get("name") for r in _http(cluster)] == [None]


def test_a_router_without_mirroring_names_itself() -> None:
    error = mirror_refused("Traefik", MirrorRoute("shadow", ({},)))
    assert str(error) == (
        "setMirrorRoute 'shadow': the Traefik router cannot mirror traffic (only Istio can)"
    )
