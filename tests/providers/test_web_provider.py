"""The web provider against a real local HTTP server: jsonPath, bodies, headers, failures."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest
from provider_support import request_for

from headway.analysis.measurement import MeasurementPhase, compile_metric_conditions
from headway.clock import VirtualClock
from headway.controllers.analysis.measure import recorded
from headway.providers.jsonpath import JsonPathError, JsonPathMiss, compile_path, find_first
from headway.providers.web import WebProvider
from prometheus_support import free_port


@dataclass
class Site:
    """What the server answers, and what it was sent."""

    status: int = 200
    body: str = "{}"
    delay: float = 0.0
    seen: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    state = Site()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            state.seen.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": self.rfile.read(length).decode(),
                }
            )
            time.sleep(state.delay)  # a slow real server, for the timeout test
            payload = state.body.encode()
            self.send_response(state.status)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = _answer  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/check"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def web(clock: VirtualClock) -> AsyncIterator[WebProvider]:
    async with httpx2.AsyncClient() as client:
        yield WebProvider(client, clock)


def web_metric(url: str, **web: Any) -> dict[str, Any]:
    return {"name": "w", "provider": {"web": {"url": url, **web}}}


async def test_json_path_selects_the_value(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    state.body = json.dumps({"data": {"ok": True, "items": [{"v": 3}, {"v": 4}]}})
    ok = await web.run(request_for(web_metric(url, jsonPath="{$.data.ok}"), clock))
    assert (ok.result, ok.value) == (True, "true")
    item = await web.run(request_for(web_metric(url, jsonPath="{$.data.items[1].v}"), clock))
    assert (item.result, item.value) == (4, "4")
    whole = await web.run(request_for(web_metric(url), clock))
    assert whole.result == json.loads(state.body)


async def test_post_sends_json_body_and_headers(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    raw = web_metric(
        url,
        method="POST",
        jsonBody={"query": "x"},
        headers=[{"key": "Authorization", "value": "Bearer t"}],
    )
    await web.run(request_for(raw, clock))
    (sent,) = state.seen
    assert sent["method"] == "POST" and json.loads(sent["body"]) == {"query": "x"}
    assert sent["headers"]["content-type"] == "application/json"
    assert sent["headers"]["authorization"] == "Bearer t"


async def test_text_answers_reach_the_conditions_as_text(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    state.body = "healthy"
    answer = await web.run(request_for(web_metric(url), clock))
    assert (answer.result, answer.value) == ("healthy", "healthy")


async def test_timeout_and_refused_connections_are_inconclusive(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    state.delay = 2.0
    slow = await web.run(request_for(web_metric(url, timeoutSeconds=1), clock))
    assert slow.phase is MeasurementPhase.INCONCLUSIVE
    assert "no answer within 1s" in slow.message
    refused_url = f"http://127.0.0.1:{free_port()}/"
    refused = await web.run(request_for(web_metric(refused_url), clock))
    assert refused.phase is MeasurementPhase.INCONCLUSIVE
    assert "could not be reached" in refused.message


@pytest.mark.parametrize(
    ("status", "phase"), [(503, "Inconclusive"), (500, "Error"), (404, "Error")]
)
async def test_non_2xx_answers(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock, status: int, phase: str
) -> None:
    state, url = site
    state.status, state.body = status, "nope"
    answer = await web.run(request_for(web_metric(url), clock))
    assert answer.phase == phase
    assert f"HTTP {status}: nope" in answer.message


async def test_missing_path_is_an_error_and_null_is_empty(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    state.body = json.dumps({"data": {"ok": None}})
    missing = await web.run(request_for(web_metric(url, jsonPath="{$.data.nope}"), clock))
    assert missing.phase is MeasurementPhase.ERROR and "no key 'nope'" in missing.message
    raw = web_metric(url, jsonPath="{$.data.ok}")
    null = await web.run(request_for(raw, clock))
    conditions = compile_metric_conditions("w", success_condition="result == nil")
    outcome = recorded(request_for(raw, clock).metric, conditions, null)
    assert outcome.phase is MeasurementPhase.FAILED
    assert "returned no data" in outcome.message and "{$.data.ok}" in outcome.message


def test_json_path_subset() -> None:
    document = {"a": {"b-c": [1, {"d": 2}]}, "xs": [{"v": 1}, {"w": 2}, {"v": 3}]}
    assert find_first(document, compile_path("{$.a['b-c'][1].d}")) == 2
    assert find_first(document, compile_path("{.a.b-c[-1]}")) == {"d": 2}
    assert find_first(document, compile_path("{$.xs[*].v}")) == 1
    assert find_first(document, compile_path("{$}")) == document
    with pytest.raises(JsonPathMiss):
        find_first(document, compile_path("{$.a.b-c[5]}"))
    with pytest.raises(JsonPathError):
        compile_path("{$.a[?(@.v > 1)]}")


async def test_a_url_without_scheme_is_an_error_not_unreachable(
    web: WebProvider, clock: VirtualClock
) -> None:
    answer = await web.run(request_for(web_metric("localhost:1/x"), clock))
    assert answer.phase is MeasurementPhase.ERROR
    assert "bad URL 'localhost:1/x'" in answer.message


async def test_basic_auth_is_sent_and_unsupported_auth_is_an_error(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock
) -> None:
    state, url = site
    basic = {"basicAuth": {"username": "ana", "password": "s3cret"}}
    await web.run(request_for(web_metric(url, authentication=basic), clock))
    assert state.seen[-1]["headers"]["authorization"] == "Basic YW5hOnMzY3JldA=="
    oauth = {"oauth2": {"tokenUrl": "http://t", "clientId": "c", "clientSecret": "s"}}
    refused = await web.run(request_for(web_metric(url, authentication=oauth), clock))
    assert refused.phase is MeasurementPhase.ERROR
    assert "web.authentication.oauth2 is not supported" in refused.message
    insecure = await web.run(request_for(web_metric(url, insecure=True), clock))
    assert insecure.phase is MeasurementPhase.ERROR and "web.insecure" in insecure.message
    assert len(state.seen) == 1  # nothing was sent without what the metric asked for


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ('{"data": {"ratio": NaN}}', "NaN"),  # a JSON number Go would reject, Python reads
        ('{"data": {"ratio": "NaN"}}', "NaN"),  # text the conditions could turn into NaN
        ('{"data": {"ratio": [0.01, -Infinity]}}', "-Inf"),
    ],
)
async def test_non_finite_values_in_an_answer_are_errors(
    site: tuple[Site, str], web: WebProvider, clock: VirtualClock, body: str, shown: str
) -> None:
    """Issue 16 item 3: a lone failureCondition must not pass a NaN the endpoint reported."""
    state, url = site
    state.body = body
    raw = {**web_metric(url, jsonPath="{$.data.ratio}"), "failureCondition": "result > 0.05"}
    answer = await web.run(request_for(raw, clock))
    conditions = compile_metric_conditions("w", failure_condition="result > 0.05")
    outcome = recorded(request_for(raw, clock).metric, conditions, answer)
    assert outcome.phase is MeasurementPhase.ERROR, outcome.message
    assert f"not a finite number ({shown}" in outcome.message
