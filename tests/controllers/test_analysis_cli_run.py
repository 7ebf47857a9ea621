"""`headway analysis run`: a template run once against a real web endpoint, printed as it goes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from headway.cli import analysis

TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: error-check
spec:
  args:
  - name: base
  - name: service
    value: checkout
  metrics:
  - name: errors
    interval: 30s
    successCondition: result < 0.05
    provider:
      web:
        url: "{{args.base}}/ratio/{{args.service}}"
        jsonPath: "{$.ratio}"
"""


@pytest.fixture
def endpoint() -> Iterator[tuple[dict[str, float], str]]:
    ratios = {"checkout": 0.01, "cart": 0.2}
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            calls.append(self.path)
            body = json.dumps({"ratio": ratios[self.path.rsplit("/", 1)[1]]}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield ratios, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(analysis.analysis_app, ["run", *args])


def test_a_passing_run_prints_each_measurement_and_exits_zero(
    endpoint: tuple[dict[str, float], str], template: Path
) -> None:
    _, base = endpoint
    result = invoke(str(template), "--arg", f"base={base}", "--count", "2", "--interval", "1s")
    lines = [line for line in result.output.splitlines() if "errors: value" in line]
    assert len(lines) == 2, result.output
    assert all(
        'value 0.01 -> Successful: successCondition "result < 0.05" was true' in line
        for line in lines
    )
    assert result.output.splitlines()[-1].startswith("run Successful")
    assert result.exit_code == 0


def test_a_failing_run_exits_one_with_the_reason(
    endpoint: tuple[dict[str, float], str], template: Path
) -> None:
    _, base = endpoint
    result = invoke(str(template), "--arg", f"base={base}", "--arg", "service=cart")
    assert "note: metric errors has no count; taking 1 measurement" in result.output
    assert "value 0.2 -> Failed" in result.output
    assert 'run Failed: metric "errors" assessed Failed' in result.output
    assert result.exit_code == 1


def test_usage_errors_exit_two(template: Path) -> None:
    missing = invoke(str(template))
    assert missing.exit_code == 2
    assert "argument 'base' has no value; pass --arg base=VALUE" in missing.output
    unknown = invoke(str(template), "--arg", "base=http://x", "--arg", "nope=1")
    assert unknown.exit_code == 2 and "no argument(s) nope" in unknown.output
    wrong = invoke(str(template), "--template", "other")
    assert wrong.exit_code == 2 and "no template named 'other'" in wrong.output


JOB_TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: smoke
spec:
  args:
  - name: exit
  metrics:
  - name: smoke-test
    provider:
      job:
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: check
                image: headway-demo/task:v1
                env: [{name: EXIT, value: "{{args.exit}}"}]
"""


def test_job_metrics_are_refused_without_a_runtime(tmp_path: Path) -> None:
    path = tmp_path / "smoke.yaml"
    path.write_text(JOB_TEMPLATE)
    result = invoke(str(path), "--arg", "exit=0")
    assert result.exit_code == 2 and "pass --state-dir of a running local runtime" in result.output
    stopped = invoke(str(path), "--arg", "exit=0", "--state-dir", str(tmp_path / "none"))
    assert stopped.exit_code == 2 and "no local runtime is running" in stopped.output


@pytest.mark.slow
async def test_job_metrics_run_real_jobs_in_a_running_runtime(tmp_path: Path) -> None:
    import asyncio

    from cluster.local_runtime.harness import running_runtime

    path = tmp_path / "smoke.yaml"
    path.write_text(JOB_TEMPLATE)
    state = tmp_path / "state"
    state.mkdir()
    async with running_runtime(state) as runtime:  # returns once runtime.json is written
        # One at a time: CliRunner swaps sys.stdout, so two at once would mix their output.
        good = await asyncio.to_thread(
            invoke, str(path), "--arg", "exit=0", "--state-dir", str(state)
        )
        bad = await asyncio.to_thread(
            invoke, str(path), "--arg", "exit=4", "--state-dir", str(state)
        )
        runs = runtime.cluster.list("argoproj.io/v1alpha1", "AnalysisRun", namespace="default")
        jobs = runtime.cluster.list("batch/v1", "Job", namespace="default")
    assert good.exit_code == 0, good.output
    assert "smoke-test: value (none) -> Successful: job" in good.output
    assert bad.exit_code == 1, bad.output
    assert "-> Failed: job" in bad.output
    assert (runs, jobs) == ([], [])  # each run is deleted when it ends, its Jobs with it
