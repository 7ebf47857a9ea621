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
