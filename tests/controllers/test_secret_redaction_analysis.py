"""Values from `secretKeyRef` arguments never reach an AnalysisRun's status, the CLI or the log
(issue 16, item 5): plant a Secret, substitute it into a web URL and a Prometheus query that
real local HTTP servers answer badly, run the real analysis controller, and grep everything a
person reads for the secret."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from analysis_fakes import ScriptedProvider
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.providers.protocol import MeasurementRequest, ProviderMeasurement
from headway.providers.registry import ProviderRegistry, default_registry

_register_all()
TOKEN = "tok-9f8e7d6c-planted"
NS = "default"
API = "argoproj.io/v1alpha1"


@pytest.fixture
def backend() -> Iterator[str]:
    """One server: `/check` answers 500 (a web metric), `/api/v1/query` an empty vector."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/api/v1/query"):
                status, body = 200, {"status": "success", "data": {"resultType": "vector"}}
                body["data"]["result"] = []  # type: ignore[index]
            else:
                status, body = 500, {"error": "upstream failed"}
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as http:
        yield http


def _store(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    (tmp_path / "state").mkdir(exist_ok=True)
    store = LocalCluster(tmp_path / "state" / "cluster.db", clock)  # `--state-dir tmp/state`
    store.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "metrics-token", "namespace": NS},
            "stringData": {"token": TOKEN},
        },
        field_manager="test",
    )
    return store


def _run(*metrics: dict[str, Any]) -> dict[str, Any]:
    ref = {"secretKeyRef": {"name": "metrics-token", "key": "token"}}
    return {
        "apiVersion": API,
        "kind": "AnalysisRun",
        "metadata": {"name": "run", "namespace": NS},
        "spec": {"args": [{"name": "token", "valueFrom": ref}], "metrics": list(metrics)},
    }


def _cli(tmp_path: Path, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--state-dir", str(tmp_path / "state")])
    return result.output


async def test_secret_arguments_are_masked_in_status_and_cli(
    tmp_path: Path, clock: VirtualClock, backend: str, client: httpx2.AsyncClient
) -> None:
    store = _store(tmp_path, clock)
    web = {"web": {"url": f"{backend}/check?token={{{{args.token}}}}"}}
    query = 'sum(rate(http_requests_total{token="{{args.token}}"}[1m]))'
    prometheus = {"prometheus": {"address": backend, "query": query}}
    store.create(
        _run(
            {"name": "web", "provider": web, "successCondition": "result == 1"},
            {"name": "prom", "provider": prometheus, "successCondition": "result[0] < 1"},
        )
    )
    controller = AnalysisController(providers=default_registry(client, clock), clock=clock)
    await controller.step(store, NS, "run", clock.now())
    status = store.get(API, "AnalysisRun", "run", NS)["status"]
    measurements = [m for r in status["metricResults"] for m in r["measurements"]]
    messages = " ".join(str(m.get("message")) for m in measurements)
    assert "HTTP 500" in messages and "returned no data" in messages  # the situation
    assert "token=***" in messages and 'token="***"' in messages
    resolved = [m.get("metadata", {}).get("ResolvedPrometheusQuery") for m in measurements]
    assert 'http_requests_total{token="***"}' in str(resolved)
    assert TOKEN not in json.dumps(status)
    store.close()
    for args in (
        ("describe", "analysisrun", "run"),
        ("get", "analysisrun", "run", "-o", "yaml"),
        ("get", "analysisrun", "run", "-o", "json"),
    ):
        shown = _cli(tmp_path, *args)
        assert "metricResults" in shown or "Status" in shown, shown
        assert TOKEN not in shown, f"{' '.join(args)} shows the secret"


class RaisingProvider(ScriptedProvider):
    """A provider bug whose exception quotes the metric it was given (secret included)."""

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        raise RuntimeError(f"cannot parse {request.metric.provider.plugin}")


async def test_a_provider_that_raises_logs_no_secret(
    tmp_path: Path, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    store = _store(tmp_path, clock)
    fake = {"plugin": {"fake": {"query": "errors{token='{{args.token}}'}"}}}
    store.create(_run({"name": "m", "provider": fake}))
    registry = ProviderRegistry({"plugin:fake": RaisingProvider(clock)})
    with caplog.at_level(logging.DEBUG):
        await AnalysisController(providers=registry, clock=clock).step(
            store, NS, "run", clock.now()
        )
    status = store.get(API, "AnalysisRun", "run", NS)["status"]
    assert "the provider failed: RuntimeError" in json.dumps(status)
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "RuntimeError" in logged and "***" in logged
    assert TOKEN not in logged and TOKEN not in json.dumps(status)
    store.close()


async def test_a_rollout_aborted_by_such_a_run_shows_no_secret(
    tmp_path: Path, clock: VirtualClock, backend: str, client: httpx2.AsyncClient
) -> None:
    """The run's messages flow into the Rollout's abort message, its events and `rollouts
    get` / `describe rollout`: the secret is masked all the way."""
    from rollout_harness import Harness, rollout

    _store(tmp_path, clock).close()  # the Secret, in `--state-dir tmp/state`
    h = Harness(tmp_path / "state", clock)  # the same store, with a Rollout controller
    url = f"{backend}/check?token={{{{args.token}}}}"
    ref = {"secretKeyRef": {"name": "metrics-token", "key": "token"}}
    h.apply(
        {
            "apiVersion": API,
            "kind": "AnalysisTemplate",
            "metadata": {"name": "web-check", "namespace": NS},
            "spec": {
                "args": [{"name": "token", "valueFrom": ref}],  # as Argo's templates do
                "metrics": [
                    {
                        "name": "web",
                        "provider": {"web": {"url": url}},
                        "successCondition": "result == 1",
                        "consecutiveErrorLimit": 0,
                    }
                ],
            },
        }
    )
    analysis = {"templates": [{"templateName": "web-check"}]}
    steps = [{"setWeight": 25}, {"analysis": analysis}]
    h.apply(rollout(canary={"steps": steps}))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": steps}))
    h.settle()
    assert len(h.runs()) == 1, h.status()
    run = h.runs()[0]["metadata"]["name"]
    controller = AnalysisController(providers=default_registry(client, clock), clock=clock)
    await controller.step(h.cluster, NS, run, clock.now())
    h.settle()
    status = h.status()
    assert status["abort"] is True and "HTTP 500" in status["message"], status
    assert "token=***" in status["message"]
    events = h.cluster.list("v1", "Event", namespace=NS)
    h.cluster.close()
    shown = [
        json.dumps(status),
        json.dumps(events),
        _cli(tmp_path, "rollouts", "get", "web"),
        _cli(tmp_path, "describe", "rollout", "web"),
        _cli(tmp_path, "get", "analysisrun", run, "-o", "yaml"),
    ]
    assert "HTTP 500" in shown[2] or "Degraded" in shown[2], shown[2]
    for text in shown:
        assert TOKEN not in text
