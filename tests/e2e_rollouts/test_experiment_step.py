"""End to end on the local runtime: a canary whose `experiment` step runs the stable and the
canary template as real processes beside the Rollout's, judged by an AnalysisRun the real
analysis controller measures (a `web` metric against a stand-in metrics backend that reports
the canary's error rate). A failing experiment aborts the rollout: every request is answered
by v1 again, and the experiment's pods are scaled away."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import canary_mesh, rollout, routed_canary
from e2e_rollouts.stage import API, FIRST_DEPLOY, Stage, request_versions
from polling import eventually_async

pytestmark = pytest.mark.slow


@pytest.fixture
def error_rate_backend() -> Iterator[str]:
    """A metrics backend that reports a 30 % error rate for whatever it is asked about."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"errorRate": 0.3}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/errors"
    finally:
        server.shutdown()


def _template(url: str) -> dict[str, Any]:
    metric = {"name": "error-rate", "successCondition": "result < 0.05", "failureLimit": 0,
              "interval": "1s",
              "provider": {"web": {"url": url + "?hash={{args.canary-hash}}",
                                   "jsonPath": "{$.errorRate}"}}}
    return {"apiVersion": API, "kind": "AnalysisTemplate",
            "metadata": {"name": "errors", "namespace": "default"},
            "spec": {"args": [{"name": "canary-hash"}], "metrics": [metric]}}


STEPS = [
    {"setWeight": 20},
    {"experiment": {
        "duration": "5m",
        "scaleDownDelaySeconds": 0,  # pods go at once (the 30 s default is pinned on the clock)
        "templates": [{"name": "baseline", "specRef": "stable"},
                      {"name": "canary", "specRef": "canary"}],
        "analyses": [{"name": "errors", "templateName": "errors",
                      "args": [{"name": "canary-hash",
                                "valueFrom": {"podTemplateHashValue": "Latest"}}]}],
    }},
    {"setWeight": 60},
]


def _experiment_pods(stage: Stage) -> list[str]:
    return [p["metadata"]["name"] for p in stage.cluster.list("v1", "Pod", namespace="default")
            if (p["metadata"].get("labels") or {}).get("app") == "web"
            and any((r.get("kind") == "ReplicaSet" and "-canary-" in r.get("name", ""))
                    or "-baseline-" in r.get("name", "")
                    for r in p["metadata"].get("ownerReferences") or [])]


async def test_a_failing_experiment_aborts_the_rollout(
    tmp_path: Path, error_rate_backend: str
) -> None:
    async with Stage.open(tmp_path) as stage:
        stage.apply(
            _template(error_rate_backend), *canary_mesh(), rollout("v1", routed_canary(STEPS))
        )
        await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
        address = str(await stage.until(stage.vs_address, 10, "the mesh address"))
        stage.apply(rollout("v2", routed_canary(STEPS)))

        def experiment_running() -> bool:
            found = stage.cluster.list(API, "Experiment", namespace="default")
            return bool(found) and (found[0].get("status") or {}).get("phase") == "Running"

        await stage.until(experiment_running, 40, "the experiment's pods up, Running")
        assert len(_experiment_pods(stage)) == 2  # baseline and canary, real processes
        await stage.until(lambda: stage.rollout_status().get("abort"), 40, "the rollout aborted")
        status = stage.rollout_status()
        assert status["phase"] == "Degraded"
        assert "Experiment 'web-" in status["message"]
        assert "AnalysisRun 'web-" in status["message"] and "phase Failed" in status["message"]
        [exp] = stage.cluster.list(API, "Experiment", namespace="default")
        assert exp["status"]["phase"] == "Failed"
        await stage.until(lambda: not _experiment_pods(stage), 30, "experiment pods gone")

        async def only_v1() -> bool:
            return set(await request_versions(address, 8)) == {"v1"}

        await eventually_async(only_v1, timeout=20, what="every request answered by v1")
