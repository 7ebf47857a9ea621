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

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from headway.routers import http1
from headway.routers.metrics import CONTENT_TYPE, MetricsSnapshot, SeriesStats

__all__ = ["LabelledSnapshot", "MeshMetricsServer", "render_labelled"]

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


class MeshMetricsServer:
    """Answers `GET /metrics` with `render_labelled` of whatever `collect` returns."""

    def __init__(
        self, collect: Callable[[], Awaitable[list[LabelledSnapshot]]], *, host: str, port: int
    ) -> None:
        self._collect = collect
        self._host, self._port = host, port
        self._server: asyncio.Server | None = None
        self._open: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the mesh metrics server is not started")
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
        body = render_labelled(await self._collect()).encode()
        return http1.simple_response(
            200, "OK", body if method == "GET" else b"", content_type=CONTENT_TYPE, close=close
        )
