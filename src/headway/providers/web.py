"""The `web` provider: one HTTP request, its JSON answer narrowed by `jsonPath`.

As in Argo Rollouts: method GET (or POST/PUT with `body` or `jsonBody`; `jsonBody` adds
`Content-Type: application/json`), `headers`, `timeoutSeconds` (10 when unset or 0), and
`jsonPath` (default `{$}`, the whole document; see `jsonpath` for the subset). An answer that
is not JSON is passed to the conditions as text. The stored value is the selected JSON value
in compact form.

Headway's differences: a server that cannot be reached, a timeout, or a 502/503/504 answer
make the measurement Inconclusive (Argo: Error); a JSON `null` or empty list/object at the
path is an empty result (Failed unless the metric sets `onEmpty`).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from headway.clock import Clock
from headway.model.analysis_providers import WebMetric
from headway.providers import http_edge
from headway.providers.http_auth import UnsupportedAuth, auth_headers
from headway.providers.jsonpath import JsonPathError, JsonPathMiss, compile_path, find_first
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    SynchronousProvider,
    measured,
    unreachable,
)
from headway.providers.values import json_text

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "WebProvider"]

DEFAULT_TIMEOUT_SECONDS = 10


def _payload(spec: WebMetric) -> tuple[bytes | None, dict[str, str]]:
    headers = {h.key: h.value for h in spec.headers}
    if spec.json_body is not None:
        headers["Content-Type"] = "application/json"
        return json.dumps(spec.json_body).encode(), headers
    if spec.body:
        return spec.body.encode(), headers
    return None, headers


class WebProvider(SynchronousProvider):
    def __init__(self, client: httpx2.AsyncClient, clock: Clock) -> None:
        self._client = client
        self._clock = clock

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        spec = request.metric.provider.web
        assert spec is not None, "the registry routes only web metrics here"
        if (spec.body or spec.json_body is not None) and spec.method == "GET":
            return self._error(request, "body/jsonBody can only be sent with POST or PUT")
        try:
            path = compile_path(spec.json_path or "{$}")
            auth = auth_headers("web", spec.authentication, insecure=spec.insecure)
        except (JsonPathError, UnsupportedAuth) as error:
            return self._error(request, str(error))
        content, headers = _payload(spec)
        headers = {**auth, **headers}
        answer = await http_edge.send(
            self._client,
            spec.method,
            spec.url,
            headers=headers,
            content=content,
            timeout_seconds=spec.timeout_seconds or DEFAULT_TIMEOUT_SECONDS,
        )
        finished = self._clock.now()
        if isinstance(answer, http_edge.Failure):
            if answer.unreachable:
                return unreachable(request, spec.url, answer.reason, finished_at=finished)
            return self._error(request, f"{spec.method} {spec.url}: {answer.reason}")
        return self._select(request, spec, answer.text, path)

    def _select(
        self, request: MeasurementRequest, spec: WebMetric, text: str, path: Any
    ) -> ProviderMeasurement:
        finished = self._clock.now()
        shown = f"{spec.method} {spec.url} {spec.json_path}"
        try:
            document = json.loads(text)
        except ValueError:
            return measured(request, result=text, value=text, finished_at=finished, query=shown)
        try:
            value = find_first(document, path, f"jsonPath {spec.json_path}")
        except JsonPathMiss as miss:
            return self._error(request, f"{spec.url}: {miss} in the answer")
        return measured(
            request, result=value, value=json_text(value), finished_at=finished, query=shown
        )
