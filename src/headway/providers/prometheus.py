"""The `prometheus` provider: an instant or a range query against a Prometheus HTTP API.

Result shapes are Argo Rollouts': a vector is a list of floats (one per series, in the order
Prometheus gave them), a scalar is a float, a range query's matrix is every sample of every
series in one flat list. NaN and ±Inf pass through as floats (`NaN`, `+Inf` in the stored
value); the caller decides what they mean (Headway: an Error unless the metric sets
`onNonFinite`). An empty vector or matrix is reported as a result like any other; the caller
decides what an empty result means (Headway: Failed unless the metric sets `onEmpty`).

`rangeQuery.start` / `.end` use Argo's expression form: `now()`, `now() - duration("5m")`
or `now() + duration("1m")`, on the provider's clock.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import httpx2

from headway.clock import Clock
from headway.model.analysis_providers import PrometheusMetric
from headway.model.durations import DurationError, parse_duration
from headway.providers import http_edge
from headway.providers.http_auth import UnsupportedAuth, auth_headers
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    SynchronousProvider,
    measured,
    unreachable,
)
from headway.providers.values import float_text, vector_text

__all__ = ["ADDRESS_VARIABLES", "DEFAULT_TIMEOUT_SECONDS", "PrometheusProvider"]

DEFAULT_TIMEOUT_SECONDS = 30
ADDRESS_VARIABLES = ("HEADWAY_PROMETHEUS_ADDRESS", "ARGO_ROLLOUTS_PROMETHEUS_ADDRESS")
_TIME_EXPRESSION = re.compile(
    r"""^\s*now\(\)\s*(?:([+-])\s*duration\(\s*(["'])([^"']+)\2\s*\)\s*)?$"""
)


class _QueryProblem(Exception):
    """The metric cannot be asked (bad range expression, no address): an Error."""


def evaluate_time(expression: str, now: datetime) -> datetime:
    """`now()`, `now() - duration("5m")` or `now() + duration("5m")`."""
    match = _TIME_EXPRESSION.match(expression or "")
    if match is None:
        raise _QueryProblem(
            f'{expression!r} is not a time expression; use now() or now() - duration("5m")'
        )
    sign, _, text = match.groups()
    if sign is None:
        return now
    try:
        offset = timedelta(seconds=parse_duration(text, bare_seconds=False))
    except DurationError as error:
        raise _QueryProblem(f"{expression!r}: {error}") from None
    return now - offset if sign == "-" else now + offset


def _number(pair: Any) -> float:
    return float(pair[1])  # Prometheus sends "0.5", "NaN", "+Inf" as strings


def _result_of(data: Mapping[str, Any]) -> tuple[Any, str]:
    """(result, stored value) for a query's `data`, as Argo shapes them."""
    kind, result = data.get("resultType"), data.get("result")
    if kind == "scalar":
        number = _number(result)
        return number, float_text(number)
    if kind == "vector":
        numbers = [_number(series["value"]) for series in result or []]
        return numbers, vector_text(numbers)
    if kind == "matrix":
        numbers = [_number(pair) for series in result or [] for pair in series["values"]]
        return numbers, vector_text(numbers)
    raise _QueryProblem(f"Prometheus result type {kind!r} is not supported")


class PrometheusProvider(SynchronousProvider):
    """Queries over HTTP with the client it is given (tests point it at a real server)."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        clock: Clock,
        *,
        default_address: str | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self._default_address = default_address or next(
            (os.environ[v] for v in ADDRESS_VARIABLES if os.environ.get(v)), None
        )

    def _address(self, spec: PrometheusMetric) -> str:
        address = spec.address or self._default_address
        if not address:
            raise _QueryProblem(
                "prometheus.address is not set (nor HEADWAY_PROMETHEUS_ADDRESS in the environment)"
            )
        if not address.startswith(("http://", "https://")):
            raise _QueryProblem(f"prometheus.address {address!r} is not an http(s) URL")
        return address.rstrip("/")

    def _endpoint(self, spec: PrometheusMetric) -> tuple[str, dict[str, str]]:
        query = spec.query or ""
        if not query.strip():
            raise _QueryProblem("prometheus.query is empty")
        if spec.range_query is None:
            return "/api/v1/query", {"query": query}
        now = self._clock.now()
        step = str(spec.range_query.get("step") or "")
        if not step:
            raise _QueryProblem("rangeQuery.step is required")
        start = evaluate_time(str(spec.range_query.get("start") or ""), now)
        end = evaluate_time(str(spec.range_query.get("end") or ""), now)
        return "/api/v1/query_range", {
            "query": query,
            "start": f"{start.timestamp():.3f}",
            "end": f"{end.timestamp():.3f}",
            "step": step,
        }

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        spec = request.metric.provider.prometheus
        assert spec is not None, "the registry routes only prometheus metrics here"
        query = spec.query or ""
        try:
            url = self._address(spec)
            path, params = self._endpoint(spec)
            auth = auth_headers("prometheus", spec.authentication, insecure=spec.insecure)
        except (_QueryProblem, UnsupportedAuth) as problem:
            return self._error(request, str(problem))
        answer = await http_edge.send(
            self._client,
            "GET",
            url + path,
            params=params,
            headers={**auth, **{h.key: h.value for h in spec.headers}},
            timeout_seconds=spec.timeout or DEFAULT_TIMEOUT_SECONDS,
        )
        finished = self._clock.now()
        if isinstance(answer, http_edge.Failure):
            if answer.unreachable:
                return unreachable(
                    request, f"Prometheus at {url}", answer.reason, finished_at=finished
                )
            return self._error(request, f"Prometheus at {url} refused the query: {answer.reason}")
        return self._interpret(request, answer, query=query, finished=finished)

    def _interpret(
        self,
        request: MeasurementRequest,
        answer: httpx2.Response,
        *,
        query: str,
        finished: datetime,
    ) -> ProviderMeasurement:
        try:
            body = answer.json()
            if body.get("status") != "success":
                raise _QueryProblem(f"Prometheus answered {body.get('error') or body!r}")
            result, value = _result_of(body["data"])
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            return self._error(request, f"unreadable Prometheus answer: {error}")
        except _QueryProblem as problem:
            return self._error(request, str(problem))
        metadata = {"ResolvedPrometheusQuery": query}
        warnings = body.get("warnings") or []
        if warnings:
            metadata["warnings"] = ", ".join(f'"{w}"' for w in warnings)
        return measured(
            request,
            result=result,
            value=value,
            finished_at=finished,
            query=query,
            metadata=metadata,
        )
