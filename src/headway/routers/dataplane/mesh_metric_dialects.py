"""The local mesh's counts under Istio's and ingress-nginx's metric names.

Analysis templates written for a cluster query the mesh's or the ingress controller's own
series, not `headway_requests_total`. So the runtime's `/metrics` also carries the same
requests as those families, with the labels such templates select on, and they run unchanged:

    istio_requests_total{reporter, destination_service, destination_service_name,
        destination_service_namespace, destination_workload, destination_workload_namespace,
        destination_app, destination_version, response_code, request_protocol, ...}
    istio_request_duration_milliseconds_bucket{..., le}          (and _sum, _count)
    nginx_ingress_controller_requests{namespace, ingress, service, canary, status, ...}
    nginx_ingress_controller_request_duration_seconds_bucket{..., le}  (and _sum, _count)

Istio counts a request once per reporting proxy; with sidecars on both sides that is once as
`reporter="source"` and once as `reporter="destination"`, so both are written (a query that
does not select a reporter counts each request twice, as it would under Istio). ingress-nginx
labels a request with the Ingress and the stable Service of the location that took it, and
names the canary upstream in `canary` when the canary answered; here the VirtualService
stands for the Ingress. The duration histograms have no code label (the routers time
requests per destination, not per code). Series that differ only in Headway's `route` label,
or come from two VirtualServices in front of one Service, are summed, since the foreign
label sets cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from headway.routers.dataplane.mesh_metrics import PlaneSeries, Workload
from headway.routers.dataplane.metrics import SeriesStats

__all__ = ["render_istio", "render_nginx"]

Labels = tuple[tuple[str, str], ...]
CLUSTER_DOMAIN = "svc.cluster.local"
REPORTERS = ("source", "destination")
UNKNOWN = "unknown"


_NEEDS_ESCAPE = frozenset('\\"\n')


def _escape(value: str) -> str:
    if _NEEDS_ESCAPE.isdisjoint(value):  # almost always: names, codes, hashes
        return value
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _body(labels: Labels) -> str:
    """`k="v",...` (escaped): written once per label set, then reused for every bucket."""
    return ",".join(f'{k}="{_escape(v)}"' for k, v in labels)


def _service_and_namespace(part: PlaneSeries, service: str) -> tuple[str, str]:
    """`web` in the VirtualService's namespace, or `web.other` for a Service elsewhere
    (`#subset` dropped: Istio names the host)."""
    name, dot, namespace = service.partition("#")[0].partition(".")
    return (name, namespace) if dot else (service, part.labels.get("namespace", "default"))


def _istio_labels(part: PlaneSeries, series: SeriesStats, reporter: str) -> Labels:
    name, namespace = _service_and_namespace(part, series.service)
    workload = part.workloads.get(series.pod_template_hash, Workload())
    return (
        ("reporter", reporter),
        ("source_workload", UNKNOWN),
        ("source_workload_namespace", UNKNOWN),
        ("destination_service", f"{name}.{namespace}.{CLUSTER_DOMAIN}"),
        ("destination_service_name", name),
        ("destination_service_namespace", namespace),
        ("destination_workload", workload.name or UNKNOWN),
        ("destination_workload_namespace", namespace),
        ("destination_app", workload.app or UNKNOWN),
        ("destination_version", workload.version or UNKNOWN),
        ("destination_canonical_service", workload.app or workload.name or UNKNOWN),
        ("request_protocol", "http"),
    )


def _nginx_labels(part: PlaneSeries, series: SeriesStats) -> Labels:
    namespace = part.labels.get("namespace", "default")
    served_by_canary = bool(part.canary_service) and series.service == part.canary_service
    location = part.stable_service if served_by_canary else series.service
    canary = f"{namespace}-{series.service}" if served_by_canary else ""
    return (
        ("controller_class", "k8s.io/ingress-nginx"),
        ("controller_namespace", "headway"),
        ("controller_pod", "local-mesh"),
        ("namespace", namespace),
        ("ingress", part.labels.get("virtualservice", "")),
        ("service", _service_and_namespace(part, location)[0]),
        ("canary", canary),
    )


class _Family:
    """Counts and histograms summed by label set, written in one family's text form."""

    def __init__(self) -> None:
        self.counts: dict[Labels, int] = {}
        self.buckets: dict[Labels, dict[str, int]] = {}
        self.sums: dict[Labels, float] = {}

    def count(self, labels: Labels, value: int) -> None:
        self.counts[labels] = self.counts.get(labels, 0) + value

    def observe(
        self, labels: Labels, series: SeriesStats, *, bounds: Sequence[str], scale: float
    ) -> None:
        cumulative, per_bound = 0, self.buckets.setdefault(labels, {})
        for bound, count in zip(bounds, series.bucket_counts, strict=True):
            cumulative += count
            per_bound[bound] = per_bound.get(bound, 0) + cumulative
        self.sums[labels] = self.sums.get(labels, 0.0) + series.duration_sum * scale

    def counter_lines(self, name: str, help_text: str) -> list[str]:
        lines = [f"# HELP {name} {help_text}", f"# TYPE {name} counter"]
        counted = sorted(self.counts.items())
        lines += [f"{name}{{{_body(labels)}}} {value}" for labels, value in counted]
        return lines

    def histogram_lines(self, name: str, help_text: str) -> list[str]:
        lines = [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
        for labels, per_bound in sorted(self.buckets.items()):
            body = _body(labels)
            bucket = f"{name}_bucket"
            lines += [f'{bucket}{{{body},le="{le}"}} {value}' for le, value in per_bound.items()]
            lines.append(f"{name}_sum{{{body}}} {self.sums[labels]!r}")
            lines.append(f"{name}_count{{{body}}} {per_bound.get('+Inf', 0)}")
        return lines


def _bounds(part: PlaneSeries, scale: float) -> list[str]:
    return [*(repr(float(b * scale)) for b in part.snapshot.buckets), "+Inf"]


def _collect(
    parts: Sequence[PlaneSeries],
    labels_of: Callable[[PlaneSeries, SeriesStats], list[Labels]],
    *,
    code_label: str,
    scale: float,
) -> tuple[_Family, _Family]:
    requests, durations = _Family(), _Family()
    for part in parts:
        bounds = _bounds(part, scale)
        for series in part.snapshot.series:
            for labels in labels_of(part, series):
                for code, count in series.codes.items():
                    requests.count((*labels, (code_label, code)), count)
                durations.observe(labels, series, bounds=bounds, scale=scale)
    return requests, durations


def render_istio(parts: Sequence[PlaneSeries]) -> list[str]:
    """`istio_requests_total` and `istio_request_duration_milliseconds`, both reporters."""
    requests, durations = _collect(
        parts,
        lambda part, series: [_istio_labels(part, series, r) for r in REPORTERS],
        code_label="response_code",
        scale=1000.0,
    )
    return [
        *requests.counter_lines("istio_requests_total", "Requests, as Istio's proxies count them."),
        *durations.histogram_lines(
            "istio_request_duration_milliseconds", "Request duration in milliseconds (Istio)."
        ),
    ]


def render_nginx(parts: Sequence[PlaneSeries]) -> list[str]:
    """`nginx_ingress_controller_requests` and its request-duration histogram."""
    requests, durations = _collect(
        parts, lambda part, series: [_nginx_labels(part, series)], code_label="status", scale=1.0
    )
    return [
        *requests.counter_lines(
            "nginx_ingress_controller_requests", "Requests, as ingress-nginx counts them."
        ),
        *durations.histogram_lines(
            "nginx_ingress_controller_request_duration_seconds",
            "Request duration in seconds (ingress-nginx).",
        ),
    ]
