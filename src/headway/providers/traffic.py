"""`headway.dev/traffic`: request metrics straight from the local routers, no Prometheus.

Configured through Argo Rollouts' plugin syntax:

    provider:
      plugin:
        headway.dev/traffic:
          address: http://127.0.0.1:9464/metrics     # a router's metrics endpoint (see below)
          service: web                                # optional: only this service's series
          podTemplateHash: "{{args.canary-hash}}"     # optional: only this revision's series
          metric: error-ratio            # error-ratio | latency-p99 | request-rate | requests
          window: 1m                                  # default 1m

Each measurement scrapes the router's Prometheus text once and compares the counters with the
same metric's earlier scrape (see `traffic_window` for which one), so a measurement never
waits for its window to pass. Results are one-element lists, like a Prometheus vector:
`requests` the requests in the window, `request-rate` per second, `error-ratio` the share of
5xx answers, `latency-p99` the 99th percentile in seconds from the histogram buckets
(interpolated as Prometheus' `histogram_quantile` does). The list is empty when the revision
has no series at all, and for `error-ratio` / `latency-p99` when the window saw no request.

`address` may be a URL or `HOST:PORT` (then `http://HOST:PORT/metrics`); when a metric leaves
it out, the provider's default is used: the local runtime's `metricsAddress` given by whoever
builds the registry, else `$HEADWAY_TRAFFIC_METRICS_ADDRESS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeAlias

from headway.clock import Clock
from headway.kubetime import format_time
from headway.model.durations import DurationError, parse_duration
from headway.providers import http_edge
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    SynchronousProvider,
    measured,
    unreachable,
)
from headway.providers.traffic_window import Counters, ScrapeHistory, SeriesKey, quantile
from headway.providers.values import vector_text

if TYPE_CHECKING:  # annotations only: the HTTP client loads with whoever makes a client
    import httpx2

__all__ = ["PLUGIN_NAME", "TRAFFIC_METRICS", "AddressSource", "TrafficProvider", "read_counters"]

PLUGIN_NAME = "headway.dev/traffic"
TRAFFIC_METRICS = ("error-ratio", "latency-p99", "request-rate", "requests")
DEFAULT_WINDOW = "1m"
TIMEOUT_SECONDS = 10.0
ADDRESS_VARIABLE = "HEADWAY_TRAFFIC_METRICS_ADDRESS"
_KNOWN_FIELDS = frozenset({"address", "service", "podTemplateHash", "metric", "window"})


class _ConfigProblem(Exception):
    pass


def _selected(labels: Mapping[str, str], service: str, pod_hash: str) -> bool:
    return (not service or labels.get("service") == service) and (
        not pod_hash or labels.get("rollouts_pod_template_hash") == pod_hash
    )


def read_counters(text: str, *, service: str, pod_hash: str) -> Counters | None:
    """Requests, 5xx answers and latency buckets of the chosen series; None if there are none."""
    # Here, not at the top: the drill plans with this module's judge but scrapes nothing, and
    # the parser brings prometheus_client with http.server and email (a new `headway check`
    # process paid about 20 ms of imports for it).
    from prometheus_client.parser import text_string_to_metric_families

    requests = errors = 0.0
    buckets: dict[float, float] = {}
    found = False
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not _selected(sample.labels, service, pod_hash):
                continue
            if sample.name == "headway_requests_total":
                found = True
                requests += sample.value
                errors += sample.value if sample.labels.get("code", "").startswith("5") else 0
            elif sample.name == "headway_request_duration_seconds_bucket":
                bound = float(sample.labels["le"])
                buckets[bound] = buckets.get(bound, 0.0) + sample.value
    if not found:
        return None
    return Counters(requests, errors, tuple(sorted(buckets.items())))


def _config(request: MeasurementRequest) -> dict[str, Any]:
    plugin = request.metric.provider.plugin or {}
    config = plugin.get(PLUGIN_NAME)
    if not isinstance(config, Mapping):
        raise _ConfigProblem(f"plugin.{PLUGIN_NAME} must be a mapping")
    unknown = sorted(set(config) - _KNOWN_FIELDS)
    if unknown:
        raise _ConfigProblem(f"plugin.{PLUGIN_NAME}: unknown field(s) {', '.join(unknown)}")
    if config.get("metric") not in TRAFFIC_METRICS:
        raise _ConfigProblem(
            f"plugin.{PLUGIN_NAME}.metric must be one of {', '.join(TRAFFIC_METRICS)}, "
            f"not {config.get('metric')!r}"
        )
    return dict(config)


def metrics_url(address: str) -> str:
    """`127.0.0.1:9464` (the runtime's `metricsAddress` form) or a URL, as a /metrics URL."""
    url = address if address.startswith(("http://", "https://")) else f"http://{address}"
    scheme, _, rest = url.partition("://")
    return url if "/" in rest else f"{scheme}://{rest}/metrics"


def _window(config: Mapping[str, Any]) -> timedelta:
    text = str(config.get("window") or DEFAULT_WINDOW)
    try:
        seconds = parse_duration(text, bare_seconds=False)
    except DurationError as error:
        raise _ConfigProblem(f"plugin.{PLUGIN_NAME}.window: {error}") from None
    if seconds <= 0:
        raise _ConfigProblem(f"plugin.{PLUGIN_NAME}.window must be above 0")
    return timedelta(seconds=seconds)


def _value(metric: str, delta: Counters, elapsed: timedelta) -> list[float]:
    if metric == "requests":
        return [delta.requests]
    if metric == "request-rate":
        return [delta.requests / elapsed.total_seconds()]
    if delta.requests <= 0:
        return []  # no request in the window: no ratio and no latency to report
    if metric == "error-ratio":
        return [delta.errors / delta.requests]
    p99 = quantile(0.99, delta.buckets)
    return [] if p99 is None else [p99]


AddressSource: TypeAlias = str | Callable[[], str | None] | None
"""A default metrics address, or where to look it up when a measurement needs it."""


class TrafficProvider(SynchronousProvider):
    """Keeps the scrapes it took (per address and series) to compute windows from."""

    def __init__(
        self, client: httpx2.AsyncClient, clock: Clock, *, default_address: AddressSource = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._default = default_address
        self._history = ScrapeHistory()

    def _default_address(self) -> str:
        """Looked up at each measurement: a runtime started after the controller (or on a
        new port) is found without restarting the controller."""
        found = self._default() if callable(self._default) else self._default
        return found or os.environ.get(ADDRESS_VARIABLE) or ""

    def _with_address(self, config: dict[str, Any]) -> dict[str, Any]:
        address = str(config.get("address") or self._default_address())
        if not address:
            raise _ConfigProblem(
                f"plugin.{PLUGIN_NAME}.address is not set, and no runtime metrics address is "
                f"known (${ADDRESS_VARIABLE})"
            )
        return {**config, "address": metrics_url(address)}

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        try:
            config = self._with_address(_config(request))
            window = _window(config)
        except _ConfigProblem as problem:
            return self._error(request, str(problem))
        address = str(config["address"])
        answer = await http_edge.send(self._client, "GET", address, timeout_seconds=TIMEOUT_SECONDS)
        now = self._clock.now()
        if isinstance(answer, http_edge.Failure):
            if answer.unreachable:
                return unreachable(
                    request, f"router metrics at {address}", answer.reason, finished_at=now
                )
            return self._error(request, f"router metrics at {address}: {answer.reason}")
        return self._measure(request, config, window, answer.text, now)

    def _measure(
        self,
        request: MeasurementRequest,
        config: Mapping[str, Any],
        window: timedelta,
        text: str,
        now: datetime,
    ) -> ProviderMeasurement:
        service, pod_hash = (
            str(config.get("service") or ""),
            str(config.get("podTemplateHash") or ""),
        )
        scope = _describe(service, pod_hash)
        shown = f"{config['metric']} of {scope} over {window} from {config['address']}"
        try:
            counters = read_counters(text, service=service, pod_hash=pod_hash)
        except (ValueError, KeyError) as error:
            return self._error(request, f"unreadable metrics from {config['address']}: {error}")
        if counters is None:
            return measured(request, result=[], value="[]", finished_at=now, query=shown)
        key = SeriesKey(
            request.run.uid, request.metric.name, str(config["address"]), service, pod_hash
        )
        delta, since = self._history.window(key, counters, now=now, window=window)
        elapsed = now - since if since is not None else window
        result = _value(str(config["metric"]), delta, elapsed)
        metadata = {
            "window": f"{elapsed.total_seconds():g}s",
            "requests": f"{delta.requests:g}",
            "baseline": format_time(since) if since else "since the router began counting",
        }
        return measured(
            request,
            result=result,
            value=vector_text(result),
            finished_at=now,
            query=shown,
            metadata=metadata,
        )


def _describe(service: str, pod_hash: str) -> str:
    parts = [f"service {service}" if service else "", f"hash {pod_hash}" if pod_hash else ""]
    return ", ".join(p for p in parts if p) or "all traffic"
