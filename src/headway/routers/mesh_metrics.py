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

from headway.routers.metrics import MetricsSnapshot, SeriesStats

__all__ = ["LabelledSnapshot", "render_labelled"]

LabelledSnapshot = tuple[Mapping[str, str], MetricsSnapshot]


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


def render_labelled(parts: Sequence[LabelledSnapshot]) -> str:
    """Prometheus text format 0.0.4 of several snapshots, each with its extra labels."""
    lines = [
        "# HELP headway_requests_total Requests proxied by the local mesh, by destination.",
        "# TYPE headway_requests_total counter",
    ]
    for extra, snapshot in parts:
        for series in snapshot.series:
            base = _base(extra, series)
            for code, count in sorted(series.codes.items()):
                labels = _labels([*base, ("code", code)])
                lines.append(f"headway_requests_total{labels} {count}")
    lines += [
        "# HELP headway_request_duration_seconds Time from request head to end of response.",
        "# TYPE headway_request_duration_seconds histogram",
    ]
    for extra, snapshot in parts:
        lines += _histogram(extra, snapshot)
    return "\n".join(lines) + "\n"
