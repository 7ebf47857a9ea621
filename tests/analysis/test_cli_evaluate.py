"""`headway analysis evaluate`: Headway's phase, Argo's beside it, exit codes, JSON, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from headway.analysis.measurement import MeasurementPhase, compile_metric_conditions
from headway.cli import analysis
from headway.controllers.analysis.measure import recorded
from headway.model.analysis import parse_analysis_template
from headway.model.yamlload import load_documents
from headway.providers.protocol import ProviderMeasurement

QUERY = "sum(rate(ok[1m])) / sum(rate(all[1m]))"

TEMPLATES = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: checkout-slo-check
spec:
  metrics:
  - name: error-rate
    interval: 30s
    failureLimit: 2
    successCondition: result[0] < 0.02
    failureCondition: result[0] >= 0.02
  - name: p99-latency
    successCondition: default(result[0], 0) < 0.8
  - name: payments
    successCondition: len(result) > 0 && result[0] < 0.01
  - name: band
    successCondition: result < 1
    failureCondition: result > 2
  - name: typo
    successCondition: result[0] <
  - name: not-a-string
    successCondition: true
  - name: ready-or-idle
    successCondition: len(result) == 0 || result[0] >= 0.95
    provider:
      prometheus:
        query: sum(rate(ok[1m])) / sum(rate(all[1m]))
  - name: ready-or-idle-evaluated
    onEmpty: Evaluate
    successCondition: len(result) == 0 || result[0] >= 0.95
  - name: ready-or-idle-inconclusive
    onEmpty: Inconclusive
    successCondition: len(result) == 0 || result[0] >= 0.95
  - name: bad-on-empty
    onEmpty: Pass
    successCondition: result[0] < 1
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: second
spec:
  metrics:
  - name: error-rate
    successCondition: result[0] < 0.5
"""


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "analysis.yaml"
    path.write_text(TEMPLATES)
    return path


def _run(*args: str) -> tuple[int, str, str]:
    app = typer.Typer()
    analysis.register(app)
    app.command("noop")(lambda: None)  # a second command keeps `analysis` a sub-command
    result = CliRunner().invoke(app, ["analysis", "evaluate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_failed_measurement_prints_the_reason_and_exits_1(template: Path) -> None:
    code, out, _ = _run(str(template), "--metric", "error-rate", "--value", "[0.31]",
                        "--template", "checkout-slo-check")  # fmt: skip
    assert code == 1
    assert out.strip() == (
        'Failed: metric "error-rate": failureCondition "result[0] >= 0.02" was true for '
        "result [0.31]"
    )


def test_successful_measurement_exits_0_and_prints_json(template: Path) -> None:
    code, out, _ = _run(str(template), "--metric", "payments", "--value", "[0.001]",
                        "--format", "json")  # fmt: skip
    assert code == 0
    message = (
        'metric "payments": successCondition "len(result) > 0 && result[0] < 0.01" '
        "was true for result [0.001]"
    )
    assert json.loads(out) == {
        "phase": "Successful",
        "message": message,
        "argo": {"phase": "Successful", "message": message},
    }


@pytest.mark.parametrize(
    ("metric", "value", "phase"),
    [
        ("payments", "[]", "Failed"),  # no data fails before any condition runs
        ("p99-latency", "[]", "Failed"),  # Argo: an Error (result[0] on []); Headway: no data
        ("p99-latency", "[0.5]", "Successful"),
        ("band", "1.5", "Inconclusive"),
        ("band", "0.5", "Successful"),
        ("band", "NaN", "Error"),  # not a finite number: no evidence (onNonFinite)
        ("typo", "[1]", "Error"),
    ],
)
def test_phase_and_exit_code(template: Path, metric: str, value: str, phase: str) -> None:
    code, out, _ = _run(str(template), "--metric", metric, "--value", value, "--format", "json")
    assert json.loads(out)["phase"] == phase
    assert code == (0 if phase == "Successful" else 1)


def test_a_syntax_error_is_printed_with_its_caret(template: Path) -> None:
    code, out, _ = _run(str(template), "--metric", "typo", "--value", "[1]")
    assert code == 1
    assert out.startswith('Error: metric "typo": could not compile successCondition')
    assert out.splitlines()[-2:] == ["result[0] <", " " * 11 + "^"]


def test_a_missing_metric_lists_the_metrics_and_exits_2(template: Path) -> None:
    code, _, err = _run(str(template), "--metric", "nope", "--value", "1")
    assert code == 2
    assert "no metric named 'nope'" in err
    assert "error-rate (AnalysisTemplate/checkout-slo-check)" in err
    assert "error-rate (AnalysisTemplate/second)" in err


def test_a_metric_in_several_documents_asks_for_a_template(template: Path) -> None:
    code, _, err = _run(str(template), "--metric", "error-rate", "--value", "[0.1]")
    assert code == 2
    assert "several documents" in err and "--template" in err
    code, out, _ = _run(str(template), "--metric", "error-rate", "--value", "[0.1]",
                        "--template", "second")  # fmt: skip
    assert (code, out.split(":")[0]) == (0, "Successful")


def test_invalid_json_value_exits_2(template: Path) -> None:
    code, _, err = _run(str(template), "--metric", "band", "--value", "{x")
    assert code == 2
    assert "--value is not valid JSON" in err


def test_a_condition_that_is_not_a_string_names_file_line_and_field(template: Path) -> None:
    code, _, err = _run(str(template), "--metric", "not-a-string", "--value", "1")
    assert code == 2
    assert f"{template}:22:" in err
    assert "spec.metrics[5].successCondition: successCondition must be a string" in err


def test_an_empty_result_shows_headways_failure_first_and_argos_success_beside_it(
    template: Path,
) -> None:
    code, out, _ = _run(str(template), "--metric", "ready-or-idle", "--value", "[]")
    headway, argo = out.splitlines()
    assert code == 1  # the exit status follows Headway's verdict
    assert headway.startswith('Failed: metric "ready-or-idle": the query returned no data: ')
    assert "sum(rate(ok[1m])) / sum(rate(all[1m]))" in headway
    assert argo == (
        'Argo Rollouts would record Successful: metric "ready-or-idle": successCondition '
        '"len(result) == 0 || result[0] >= 0.95" was true for result []'
    )


@pytest.mark.parametrize(
    ("metric", "value", "headway", "argo"),
    [
        ("ready-or-idle", "[]", "Failed", "Successful"),
        ("ready-or-idle", "null", "Failed", "Error"),  # len(nil) is an error in expr-lang
        ("ready-or-idle", "[0.97]", "Successful", "Successful"),
        ("ready-or-idle-evaluated", "[]", "Successful", "Successful"),
        ("ready-or-idle-inconclusive", "[]", "Inconclusive", "Successful"),
        ("p99-latency", "[]", "Failed", "Error"),
    ],
)
def test_json_gives_both_verdicts(
    template: Path, metric: str, value: str, headway: str, argo: str
) -> None:
    code, out, _ = _run(str(template), "--metric", metric, "--value", value, "--format", "json")
    shown = json.loads(out)
    assert (shown["phase"], shown["argo"]["phase"]) == (headway, argo)
    assert code == (0 if headway == "Successful" else 1)


def test_the_same_verdict_in_text_prints_one_line(template: Path) -> None:
    _, out, _ = _run(str(template), "--metric", "ready-or-idle-evaluated", "--value", "[]")
    assert len(out.splitlines()) == 1


def test_the_verdict_is_the_one_the_controller_records(template: Path) -> None:
    alone = "\n".join([*TEMPLATES.splitlines()[:4], "spec:", "  metrics:"])
    start = TEMPLATES.index("  - name: ready-or-idle\n")
    alone += "\n" + TEMPLATES[start : TEMPLATES.index("  - name: ready-or-idle-evaluated")]
    parsed, problems = parse_analysis_template(load_documents(alone, "t.yaml").documents[0])
    assert parsed is not None, problems
    metric = parsed.spec.metrics[0]
    conditions = compile_metric_conditions(
        metric.name, success_condition=metric.success_condition or ""
    )
    now = datetime(2026, 1, 1, tzinfo=UTC)
    answer = ProviderMeasurement(
        MeasurementPhase.RUNNING, now, now, has_result=True, result=[], query=QUERY
    )
    stored = recorded(metric, conditions, answer)
    _, out, _ = _run(str(template), "--metric", "ready-or-idle", "--value", "[]", "-o", "json")
    assert json.loads(out)["phase"] == str(stored.phase)
    assert json.loads(out)["message"] == stored.message


def test_an_unknown_on_empty_is_a_usage_error_naming_the_field(template: Path) -> None:
    code, _, err = _run(str(template), "--metric", "bad-on-empty", "--value", "[]")
    assert code == 2
    assert "spec.metrics[9].onEmpty: onEmpty must be one of Failed, Inconclusive, Evaluate" in err


def test_a_missing_file_and_bad_yaml_exit_2(tmp_path: Path) -> None:
    code, _, err = _run(str(tmp_path / "none.yaml"), "--metric", "m", "--value", "1")
    assert (code, "no such file" in err) == (2, True)
    broken = tmp_path / "broken.yaml"
    broken.write_text("spec: [unclosed\n")
    code, _, err = _run(str(broken), "--metric", "m", "--value", "1")
    assert (code, "YAML syntax error" in err) == (2, True)


def test_the_installed_command_has_the_analysis_sub_app(template: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "headway", "analysis", "evaluate", str(template),
         "--metric", "payments", "--value", "[]"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith('Failed: metric "payments": the query returned no data')
