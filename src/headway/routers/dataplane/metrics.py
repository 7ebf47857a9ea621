"""Request counts and latency per pod-template hash, as a snapshot and as Prometheus text.

Two series families, labelled so that a canary-scoped query needs one matcher:

    headway_requests_total{service, rollouts_pod_template_hash, route, code}
    headway_request_duration_seconds_bucket{service, rollouts_pod_template_hash, route, le}
    headway_request_duration_seconds_sum / _count  (same labels without `le`)

Recording is a dict update on the proxy's data path (no locks: one event loop owns it);
the text format is written here rather than through prometheus-client's registry because
label sets appear and disappear with pods and the snapshot is needed as plain data anyway.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from headway.routers.dataplane import http1
from headway.routers.dataplane.latency_buckets import DEFAULT_BUCKETS

__all__ = [
    "DEFAULT_BUCKETS",
    "MetricsServer",
    "MetricsSnapshot",
    "RequestMetrics",
    "SeriesStats",
    "render_prometheus",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True)
class SeriesStats:
    """Everything counted for one (service, pod-template hash, route)."""

    service: str
    pod_template_hash: str
    route: str
    codes: Mapping[str, int]
    bucket_counts: tuple[int, ...]  # per bucket, not cumulative; the last one is +Inf
    duration_sum: float

    @property
    def count(self) -> int:
        return sum(self.codes.values())

    def count_codes(self, prefix: str) -> int:
        """Requests whose code starts with `prefix`, e.g. "5" for every 5xx."""
        return sum(n for code, n in self.codes.items() if code.startswith(prefix))


@dataclass(frozen=True)
class MetricsSnapshot:
    """A point-in-time copy of every series, for analysis without Prometheus."""

    buckets: tuple[float, ...] = DEFAULT_BUCKETS
    series: tuple[SeriesStats, ...] = ()

    def select(
        self,
        *,
        pod_template_hash: str | None = None,
        service: str | None = None,
        route: str | None = None,
    ) -> tuple[SeriesStats, ...]:
        return tuple(
            s
            for s in self.series
            if (pod_template_hash is None or s.pod_template_hash == pod_template_hash)
            and (service is None or s.service == service)
            and (route is None or s.route == route)
        )

    def requests(
        self,
        *,
        pod_template_hash: str | None = None,
        service: str | None = None,
        route: str | None = None,
        code_prefix: str = "",
    ) -> int:
        """How many requests matched, optionally only those whose code starts with a prefix."""
        chosen = self.select(pod_template_hash=pod_template_hash, service=service, route=route)
        return sum(s.count_codes(code_prefix) for s in chosen)


@dataclass
class _Accumulator:
    codes: dict[str, int] = field(default_factory=dict)
    bucket_counts: list[int] = field(default_factory=list)
    duration_sum: float = 0.0


class RequestMetrics:
    """The mutable counters a router records into; `snapshot()` copies them out."""

    def __init__(self, buckets: tuple[float, ...] = DEFAULT_BUCKETS) -> None:
        if list(buckets) != sorted(set(buckets)):
            raise ValueError(f"histogram buckets must be strictly increasing: {buckets}")
        self._buckets = buckets
        self._series: dict[tuple[str, str, str], _Accumulator] = {}

    def observe(
        self, *, service: str, pod_template_hash: str, route: str, code: str, seconds: float
    ) -> None:
        """Count one request."""
        self.add(
            service=service,
            pod_template_hash=pod_template_hash,
            route=route,
            code=code,
            count=1,
            seconds_each=seconds,
        )

    def add(
        self,
        *,
        service: str,
        pod_template_hash: str,
        route: str,
        code: str,
        count: int,
        seconds_each: float,
    ) -> None:
        """Count `count` requests that each took `seconds_each` (HAProxy reports averages)."""
        if count <= 0:
            return
        key = (service, pod_template_hash, route)
        acc = self._series.get(key)
        if acc is None:
            acc = self._series[key] = _Accumulator(bucket_counts=[0] * (len(self._buckets) + 1))
        acc.codes[code] = acc.codes.get(code, 0) + count
        acc.bucket_counts[bisect.bisect_left(self._buckets, seconds_each)] += count
        acc.duration_sum += seconds_each * count

    def snapshot(self) -> MetricsSnapshot:
        series = tuple(
            SeriesStats(
                service=service,
                pod_template_hash=pod_hash,
                route=route,
                codes=dict(acc.codes),
                bucket_counts=tuple(acc.bucket_counts),
                duration_sum=acc.duration_sum,
            )
            for (service, pod_hash, route), acc in sorted(self._series.items())
        )
        return MetricsSnapshot(buckets=self._buckets, series=series)


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{k}="{_label_value(v)}"' for k, v in pairs) + "}"


def _format_bound(bound: float) -> str:
    return repr(float(bound))


def render_prometheus(snapshot: MetricsSnapshot) -> str:
    """The snapshot in Prometheus text exposition format 0.0.4."""
    lines = [
        "# HELP headway_requests_total Requests proxied, by destination pod-template hash.",
        "# TYPE headway_requests_total counter",
    ]
    for s in snapshot.series:
        base = [
            ("service", s.service),
            ("rollouts_pod_template_hash", s.pod_template_hash),
            ("route", s.route),
        ]
        for code, count in sorted(s.codes.items()):
            lines.append(f"headway_requests_total{_labels([*base, ('code', code)])} {count}")
    lines += [
        "# HELP headway_request_duration_seconds Time from request head to end of response.",
        "# TYPE headway_request_duration_seconds histogram",
    ]
    for s in snapshot.series:
        base = [
            ("service", s.service),
            ("rollouts_pod_template_hash", s.pod_template_hash),
            ("route", s.route),
        ]
        cumulative = 0
        bounds = [*(_format_bound(b) for b in snapshot.buckets), "+Inf"]
        for bound, count in zip(bounds, s.bucket_counts, strict=True):
            cumulative += count
            labels = _labels([*base, ("le", bound)])
            lines.append(f"headway_request_duration_seconds_bucket{labels} {cumulative}")
        lines.append(f"headway_request_duration_seconds_sum{_labels(base)} {s.duration_sum!r}")
        lines.append(f"headway_request_duration_seconds_count{_labels(base)} {cumulative}")
    return "\n".join(lines) + "\n"


class MetricsServer:
    """A tiny asyncio HTTP server answering `GET /metrics` with whatever `render` returns.

    One router serves its own snapshot (`render_prometheus`); the local mesh serves every
    router's series at once (`mesh_metrics.render_labelled`).
    """

    def __init__(
        self,
        render: Callable[[], Awaitable[str]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._render = render
        self._host, self._port = host, port
        self._server: asyncio.Server | None = None
        self._open: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the metrics server is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)

    async def close(self) -> None:
        """Stop listening and end the connections clients keep alive (a scraper's, a
        controller's); otherwise their handlers are cancelled when the loop ends, which
        asyncio logs as an error."""
        if self._server is not None:
            self._server.close()
            for writer in self._open.values():
                writer.close()
            if self._open:
                await asyncio.wait(list(self._open), timeout=2.0)
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._open[task] = writer
        try:
            while (raw := await http1.read_head(reader)) is not None:
                head = http1.parse_head(raw)
                await http1.read_raw_body(reader, http1.request_framing(head))
                close = http1.client_wants_close(head)
                writer.write(await self._answer(head, close=close))
                await writer.drain()
                if close:
                    break
        except (http1.BadMessage, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._open.pop(task, None)

    async def _answer(self, head: http1.MessageHead, *, close: bool) -> bytes:
        method, target = head.start[0], head.start[1]
        if target.split("?", 1)[0] != "/metrics":
            return http1.simple_response(404, "Not Found", b"try /metrics\n", close=close)
        if method not in ("GET", "HEAD"):
            return http1.simple_response(405, "Method Not Allowed", b"", close=close)
        body = (await self._render()).encode()
        return http1.simple_response(
            200, "OK", body if method == "GET" else b"", content_type=CONTENT_TYPE, close=close
        )
