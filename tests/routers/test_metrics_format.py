"""The metrics snapshot and its Prometheus text, parsed back by prometheus-client."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from headway.routers.dataplane.metrics import DEFAULT_BUCKETS, RequestMetrics, render_prometheus


def parsed_samples(metrics: RequestMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = render_prometheus(metrics.snapshot())
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_bucket_bounds_are_inclusive_and_cumulative() -> None:
    metrics = RequestMetrics()
    for seconds in (0.005, 0.0051, 0.01, 12.0):
        metrics.observe(
            service="app", pod_template_hash="h1", route="", code="200", seconds=seconds
        )
    samples = parsed_samples(metrics)

    def bucket(le: str) -> float:
        labels = (
            ("le", le),
            ("rollouts_pod_template_hash", "h1"),
            ("route", ""),
            ("service", "app"),
        )
        return samples["headway_request_duration_seconds_bucket", labels]

    assert [bucket("0.005"), bucket("0.01"), bucket("10.0"), bucket("+Inf")] == [1, 3, 3, 4]
    series = metrics.snapshot().series[0]
    assert series.duration_sum == pytest.approx(12.0201)
    assert series.count == 4


def test_label_values_are_escaped_and_parse_back() -> None:
    metrics = RequestMetrics()
    awkward = 'we"ird\\name\nx'
    metrics.observe(service=awkward, pod_template_hash="h", route="r", code="503", seconds=0)
    samples = parsed_samples(metrics)
    key = (
        "headway_requests_total",
        (
            ("code", "503"),
            ("rollouts_pod_template_hash", "h"),
            ("route", "r"),
            ("service", awkward),
        ),
    )
    assert samples[key] == 1


def test_snapshot_selects_by_hash_service_and_code_class() -> None:
    metrics = RequestMetrics()
    for code, count in (("200", 7), ("503", 2), ("500", 1)):
        metrics.add(
            service="canary",
            pod_template_hash="c1",
            route="",
            code=code,
            count=count,
            seconds_each=0.1,
        )
    metrics.add(
        service="stable", pod_template_hash="s1", route="", code="500", count=4, seconds_each=0.1
    )
    snapshot = metrics.snapshot()
    assert snapshot.requests(pod_template_hash="c1") == 10
    assert snapshot.requests(pod_template_hash="c1", code_prefix="5") == 3
    assert snapshot.requests(service="stable", code_prefix="5") == 4
    assert snapshot.buckets == DEFAULT_BUCKETS


def test_buckets_must_increase() -> None:
    with pytest.raises(ValueError, match="increasing"):
        RequestMetrics(buckets=(0.1, 0.05))
