"""Pure parts around the plan: endpoints from Services and Pods, Rollout roles, the status,
and the aggregated metrics text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from headway.cluster.local.mesh.plan import ServiceRef, plan_virtual_service
from headway.cluster.local.mesh.plane import PlaneEndpoint, plane_config
from headway.cluster.local.mesh.status import (
    error_status,
    keep_transition_times,
    realized_status,
    same_status,
)
from headway.cluster.local.mesh.world import MeshWorld, rollout_roles
from headway.model.obj import Obj
from headway.routers.dataplane.mesh_metrics import PlaneSeries, render_labelled
from headway.routers.dataplane.metrics import RequestMetrics


def pod(name: str, labels: dict[str, str], *, ready: bool = True, port: str = "4000") -> Obj:
    return {
        "metadata": {"name": name, "namespace": "shop", "labels": labels,
                     "annotations": {"headway.dev/port": port}},
        "status": {"podIP": "127.0.0.1",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def service(name: str, **selector: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "shop"}, "spec": {"selector": selector}}


def test_endpoints_are_the_ready_selected_pods_with_their_rollout_hash() -> None:
    pods = [
        pod("a", {"app": "web", "rollouts-pod-template-hash": "r1", "pod-template-hash": "p1"},
            port="4001"),
        pod("b", {"app": "web", "pod-template-hash": "p2"}, port="4002"),
        pod("c", {"app": "web"}, ready=False),
        pod("d", {"app": "other"}),
        pod("e", {"app": "web"}, port=""),
    ]
    deleting = pod("f", {"app": "web"})
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    world = MeshWorld.of([service("web", app="web"), service("all")], [*pods, deleting], [])
    assert world.endpoints(ServiceRef("web", "shop")) == (
        PlaneEndpoint("127.0.0.1", 4001, "r1", "a", workload="a", app="web"),
        PlaneEndpoint("127.0.0.1", 4002, "p2", "b", workload="b", app="web"),
    )
    assert world.endpoints(ServiceRef("all", "shop")) == ()  # no selector selects nothing
    assert world.endpoints(ServiceRef("web", "elsewhere")) == ()
    assert not world.has_service(ServiceRef("missing", "shop"))


def test_a_subset_narrows_its_service_to_the_pods_with_the_rules_labels() -> None:
    pods = [pod("a", {"app": "web", "rollouts-pod-template-hash": "h1"}, port="4001"),
            pod("b", {"app": "web", "rollouts-pod-template-hash": "h2"}, port="4002"),
            pod("c", {"app": "other", "rollouts-pod-template-hash": "h2"}, port="4003")]
    rule = {"metadata": {"name": "web", "namespace": "shop"},
            "spec": {"host": "web.shop.svc.cluster.local",
                     "subsets": [{"name": "stable", "labels": {"rollouts-pod-template-hash": "h1"}},
                                 {"name": "canary", "labels": {"rollouts-pod-template-hash": "h2"}},
                                 {"name": "any"}]}}
    world = MeshWorld.of([service("web", app="web")], pods, [], [rule])
    ports = {s: [e.port for e in world.endpoints(ServiceRef("web", "shop", s))]
             for s in ("stable", "canary", "any", "undefined")}
    assert ports == {"stable": [4001], "canary": [4002], "any": [4001, 4002], "undefined": []}


def test_subset_level_rollouts_name_subsets_as_roles() -> None:
    rule = {"name": "dr", "stableSubsetName": "s", "canarySubsetName": "c"}
    istio = {"virtualService": {"name": "vs"}, "destinationRule": rule}
    canary = {"trafficRouting": {"istio": istio}}
    ro = {"metadata": {"name": "a", "namespace": "shop"}, "spec": {"strategy": {"canary": canary}}}
    assert rollout_roles([ro]) == {("shop", "vs"): ("s", "c")}
    route = [{"destination": {"host": "web", "subset": "c"}, "weight": 10},
             {"destination": {"host": "web", "subset": "s"}, "weight": 90}]
    vs = {"metadata": {"name": "vs", "namespace": "shop"}, "spec": {"http": [{"route": route}]}}
    plan = plan_virtual_service(vs, roles=("s", "c"))
    assert (plan.stable, plan.canary, plan.canary_weight) == (
        ServiceRef("web", "shop", "s"), ServiceRef("web", "shop", "c"), 10)


def test_rollouts_name_their_virtual_services_roles() -> None:
    def rollout(name: str, istio: dict[str, Any]) -> dict[str, Any]:
        canary = {"stableService": f"{name}-stable", "canaryService": f"{name}-canary",
                  "trafficRouting": {"istio": istio}}
        return {"metadata": {"name": name, "namespace": "shop"},
                "spec": {"strategy": {"canary": canary}}}

    roles = rollout_roles([
        rollout("a", {"virtualService": {"name": "vs-a"}}),
        rollout("b", {"virtualServices": [{"name": "vs-b1"}, {"name": "vs-b2.other"}]}),
        {"metadata": {"name": "bg", "namespace": "shop"},
         "spec": {"strategy": {"blueGreen": {}}}},
    ])
    assert roles == {
        ("shop", "vs-a"): ("a-stable", "a-canary"),
        ("shop", "vs-b1"): ("b-stable", "b-canary"),
        ("other", "vs-b2"): ("b-stable", "b-canary"),
    }


def realized(weight: int, now: datetime, *, endpoints: bool = True) -> dict[str, Any]:
    vs = {"metadata": {"name": "web", "namespace": "shop"},
          "spec": {"http": [{"route": [{"destination": {"host": "s"}, "weight": 100 - weight},
                                       {"destination": {"host": "c"}, "weight": weight}]}]}}
    plan = plan_virtual_service(vs, roles=None)
    config = plane_config(plan, namespace="shop",
                          endpoints=lambda ref: (PlaneEndpoint("127.0.0.1", 1, ref.name, "p"),)
                          if endpoints or ref.name == "s" else ())
    return realized_status(plan=plan, config=config, router="embedded", address="127.0.0.1:9",
                           generation=2, now=now)


def test_status_says_weights_and_endpoints_and_keeps_transition_times() -> None:
    t1, t2 = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    first = realized(10, t1)
    assert [(d["service"], d["role"], d["weight"]) for d in first["destinations"]] == [
        ("s", "stable", 90), ("c", "canary", 10)]
    assert first["destinations"][1]["endpoints"] == [
        {"pod": "p", "address": "127.0.0.1:1", "podTemplateHash": "c"}]
    assert first["conditions"][0]["message"] == "embedded router at 127.0.0.1:9: s 90%, c 10%"
    assert realized(10, t1, endpoints=False)["conditions"][0]["message"].endswith(
        "(no ready endpoint behind c: its share answers 503)")
    assert "no ready endpoint" not in realized(0, t1, endpoints=False)["conditions"][0]["message"]
    assert same_status(first, realized(10, t2))
    assert not same_status(first, realized(20, t2))
    kept = keep_transition_times(first, realized(20, t2))
    assert kept["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    failed = error_status(first, reason="RouterError", message="boom", generation=3, now=t2)
    assert failed["destinations"] == first["destinations"]  # still what is served
    flipped = keep_transition_times(first, failed)
    assert flipped["conditions"][0]["lastTransitionTime"] == "2026-01-02T00:00:00Z"


def test_aggregated_metrics_carry_the_virtual_service_and_parse_as_prometheus() -> None:
    a, b = RequestMetrics(), RequestMetrics()
    a.observe(service="web-canary", pod_template_hash="h2", route="", code="500", seconds=0.02)
    a.observe(service="web-canary", pod_template_hash="h2", route="", code="200", seconds=0.2)
    b.observe(service="api", pod_template_hash="h9", route="beta", code="200", seconds=0.001)
    text = render_labelled([
        PlaneSeries({"namespace": "shop", "virtualservice": "web"}, a.snapshot()),
        PlaneSeries({"namespace": "shop", "virtualservice": "api"}, b.snapshot()),
    ])
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    totals = {(s.labels["virtualservice"], s.labels["code"]): s.value
              for s in samples if s.name == "headway_requests_total"}
    assert totals == {("web", "200"): 1, ("web", "500"): 1, ("api", "200"): 1}
    counts = {s.labels["virtualservice"]: s.value
              for s in samples if s.name == "headway_request_duration_seconds_count"}
    assert counts == {"web": 2, "api": 1}
    inf = [s for s in samples if s.name == "headway_request_duration_seconds_bucket"
           and s.labels["le"] == "+Inf" and s.labels["service"] == "web-canary"]
    assert inf[0].value == 2 and inf[0].labels["rollouts_pod_template_hash"] == "h2"


def test_malformed_rollouts_play_no_role_instead_of_stopping_the_mesh() -> None:
    good = {"metadata": {"name": "a", "namespace": "shop"},
            "spec": {"strategy": {"canary": {
                "stableService": "s", "canaryService": "c",
                "trafficRouting": {"istio": {"virtualService": {"name": "vs"}}}}}}}
    malformed = [
        {"metadata": {"name": "b", "namespace": "shop"}, "spec": {"strategy": 5}},
        {"metadata": {"name": "c", "namespace": "shop"}, "spec": 7},
        {"metadata": {"name": "d", "namespace": "shop"},
         "spec": {"strategy": {"canary": {"trafficRouting": "istio"}}}},
    ]
    assert rollout_roles([*malformed, good]) == {("shop", "vs"): ("s", "c")}
