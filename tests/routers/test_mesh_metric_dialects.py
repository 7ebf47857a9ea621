"""The mesh's counts under Istio's and ingress-nginx's names, with the labels their templates
select on (pure: no router, no Prometheus; the real-Prometheus run is in local_mesh)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from headway.cluster.local.mesh.world import workload_name
from headway.routers.dataplane.mesh_metric_dialects import render_istio, render_nginx
from headway.routers.dataplane.mesh_metrics import PlaneSeries, Workload
from headway.routers.dataplane.metrics import RequestMetrics


def checkout_plane() -> PlaneSeries:
    """A stable and a canary behind one VirtualService, each seen on two Headway routes."""
    metrics = RequestMetrics()
    for route in ("", "canary-header"):
        metrics.observe(service="checkout-stable", pod_template_hash="aaa", route=route,
                        code="200", seconds=0.004)
    metrics.observe(service="checkout-canary", pod_template_hash="bbb", route="",
                    code="500", seconds=0.3)
    metrics.observe(service="checkout-canary", pod_template_hash="bbb", route="",
                    code="200", seconds=0.02)
    return PlaneSeries(
        labels={"namespace": "shop", "virtualservice": "checkout"},
        snapshot=metrics.snapshot(),
        workloads={"aaa": Workload("checkout", "checkout", "v1"),
                   "bbb": Workload("checkout", "checkout", "v2")},
        stable_service="checkout-stable",
        canary_service="checkout-canary",
    )


def samples(lines: list[str]) -> list[Sample]:
    text = "\n".join(lines) + "\n"
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


def test_istio_requests_carry_the_labels_istio_templates_select_on() -> None:
    found = samples(render_istio([checkout_plane()]))
    totals = [s for s in found if s.name == "istio_requests_total"]
    source = {(s.labels["destination_service"], s.labels["response_code"]): s.value
              for s in totals if s.labels["reporter"] == "source"}
    # The two Headway routes of the stable are one Istio series (summed, not duplicated).
    assert source == {
        ("checkout-stable.shop.svc.cluster.local", "200"): 2,
        ("checkout-canary.shop.svc.cluster.local", "200"): 1,
        ("checkout-canary.shop.svc.cluster.local", "500"): 1,
    }
    assert {s.labels["reporter"] for s in totals} == {"source", "destination"}
    canary = next(s for s in totals if s.labels["response_code"] == "500")
    assert canary.labels["destination_service_name"] == "checkout-canary"
    assert canary.labels["destination_service_namespace"] == "shop"
    assert canary.labels["destination_workload"] == "checkout"
    assert canary.labels["destination_version"] == "v2"


def test_istio_durations_are_in_milliseconds() -> None:
    found = samples(render_istio([checkout_plane()]))
    canary = {s.labels["le"]: s.value for s in found
              if s.name == "istio_request_duration_milliseconds_bucket"
              and s.labels["reporter"] == "source"
              and s.labels["destination_service_name"] == "checkout-canary"}
    assert canary["25.0"] == 1 and canary["250.0"] == 1 and canary["500.0"] == 2
    assert canary["+Inf"] == 2
    total = next(s for s in found if s.name == "istio_request_duration_milliseconds_sum"
                 and s.labels["destination_service_name"] == "checkout-canary")
    assert abs(total.value - 320.0) < 1e-6


def test_nginx_requests_name_the_ingress_the_location_service_and_the_canary() -> None:
    lines = render_nginx([checkout_plane()])
    assert lines[1] == "# TYPE nginx_ingress_controller_requests counter"
    # prometheus_client's parser names a counter's samples `..._total`; Prometheus itself keeps
    # the exposed name (the real-Prometheus test in local_mesh queries it as written).
    found = [s for s in samples(lines) if s.name == "nginx_ingress_controller_requests_total"]
    by = {(s.labels["service"], s.labels["canary"], s.labels["status"]): s.value for s in found}
    # ingress-nginx files canary answers under the stable location, naming the canary upstream.
    assert by == {
        ("checkout-stable", "", "200"): 2,
        ("checkout-stable", "shop-checkout-canary", "200"): 1,
        ("checkout-stable", "shop-checkout-canary", "500"): 1,
    }
    assert {(s.labels["ingress"], s.labels["namespace"]) for s in found} == {("checkout", "shop")}
    counts = {s.labels["canary"]: s.value for s in samples(render_nginx([checkout_plane()]))
              if s.name == "nginx_ingress_controller_request_duration_seconds_count"}
    assert counts == {"": 2, "shop-checkout-canary": 2}


def test_a_service_in_another_namespace_keeps_its_own_namespace() -> None:
    metrics = RequestMetrics()
    metrics.observe(service="api.backend", pod_template_hash="h", route="", code="200",
                    seconds=0.01)
    plane = PlaneSeries({"namespace": "shop", "virtualservice": "edge"}, metrics.snapshot())
    found = next(s for s in samples(render_istio([plane])) if s.name == "istio_requests_total")
    assert found.labels["destination_service"] == "api.backend.svc.cluster.local"
    assert found.labels["destination_workload"] == "unknown"


def test_workload_is_the_replica_set_owner_without_its_hash() -> None:
    def pod(owner: dict[str, object]) -> dict[str, object]:
        return {"metadata": {"name": "checkout-7c9f-x2k7q", "ownerReferences": [owner]}}

    rs = {"kind": "ReplicaSet", "name": "checkout-7c9f", "controller": True}
    assert workload_name(pod(rs), "7c9f") == "checkout"
    assert workload_name(pod({"kind": "Job", "name": "smoke", "controller": True}), "") == "smoke"
    assert workload_name({"metadata": {"name": "lonely"}}, "") == "lonely"
