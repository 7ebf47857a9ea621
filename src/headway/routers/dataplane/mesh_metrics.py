"""The local mesh's one `/metrics` endpoint: every router's series, with where they came from.

Same families and labels as a single router's endpoint (`metrics.render_prometheus`), each
series also labelled with the VirtualService it passed through:

    headway_requests_total{namespace, virtualservice, service, rollouts_pod_template_hash,
                           route, code}
    headway_request_duration_seconds_bucket{..., le}   (and _sum, _count)

`service` is the destination Service, so a canary-scoped query needs only
`rollouts_pod_template_hash="..."` (and `service="..."` to be explicit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from headway.routers.dataplane.metrics import MetricsSnapshot, SeriesStats

__all__ = ["PlaneSeries", "Workload", "render_labelled"]


@dataclass(frozen=True)
class Workload:
    """Who answered behind a pod-template hash, as Istio's telemetry names it."""

    name: str = ""
    app: str = ""
    version: str = ""


@dataclass(frozen=True)
class PlaneSeries:
    """One router's counts, the labels saying where they came from (`namespace`,
    `virtualservice`), and what the Istio- and NGINX-named families need besides: the
    workload behind each pod-template hash, and which Services are the stable and canary."""

    labels: Mapping[str, str]
    snapshot: MetricsSnapshot
    workloads: Mapping[str, Workload] = field(default_factory=dict)
    stable_service: str = ""
    canary_service: str = ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _base(extra: Mapping[str, str], series: SeriesStats) -> list[tuple[str, str]]:
    return [
        *sorted(extra.items()),
        ("service", series.service),
        ("rollouts_pod_template_hash", series.pod_template_hash),
        ("route", series.route),
    ]


def _histogram(extra: Mapping[str, str], snapshot: MetricsSnapshot) -> list[str]:
    lines = []
    bounds = [*(repr(float(b)) for b in snapshot.buckets), "+Inf"]
    for series in snapshot.series:
        base = _base(extra, series)
        cumulative = 0
        for bound, count in zip(bounds, series.bucket_counts, strict=True):
            cumulative += count
            labels = _labels([*base, ("le", bound)])
            lines.append(f"headway_request_duration_seconds_bucket{labels} {cumulative}")
        lines.append(f"headway_request_duration_seconds_sum{_labels(base)} {series.duration_sum!r}")
        lines.append(f"headway_request_duration_seconds_count{_labels(base)} {cumulative}")
    return lines


def render_labelled(parts: Sequence[PlaneSeries]) -> str:
    """Prometheus text format 0.0.4 of several snapshots, each with its extra labels."""
    lines = [
        "# HELP headway_requests_total Requests proxied by the local mesh, by destination.",
        "# TYPE headway_requests_total counter",
    ]
    for part in parts:
        for series in part.snapshot.series:
            base = _base(part.labels, series)
            for code, count in sorted(series.codes.items()):
                labels = _labels([*base, ("code", code)])
                lines.append(f"headway_requests_total{labels} {count}")
    lines += [
        "# HELP headway_request_duration_seconds Time from request head to end of response.",
        "# TYPE headway_request_duration_seconds histogram",
    ]
    for part in parts:
        lines += _histogram(part.labels, part.snapshot)
    return "\n".join(lines) + "\n"
