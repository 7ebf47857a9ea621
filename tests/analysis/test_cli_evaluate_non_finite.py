"""`headway analysis evaluate` applies the non-finite rule the controller applies (issue 16,
item 3): `--value '[NaN]'` is Headway's Error beside Argo's Successful, `onNonFinite` opts
out, and an unknown `onNonFinite` names the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from headway.cli import analysis

TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: errors
spec:
  metrics:
  - name: error-rate
    failureCondition: result[0] > 0.05
  - name: error-rate-argo
    onNonFinite: Evaluate
    failureCondition: result[0] > 0.05
  - name: error-rate-bad
    onNonFinite: Skip
    failureCondition: result[0] > 0.05
"""


def _run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE)
    app = typer.Typer()
    analysis.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["analysis", "evaluate", str(path), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("value", ["[NaN]", "[-Infinity]", "[0.01, NaN]"])
def test_non_finite_value_is_an_error_beside_argos_success(tmp_path: Path, value: str) -> None:
    code, out, _ = _run(tmp_path, "-m", "error-rate", "--value", value, "-o", "json")
    shown = json.loads(out)
    assert (shown["phase"], shown["argo"]["phase"]) == ("Error", "Successful")
    assert "not a finite number" in shown["message"]
    assert code == 1


def test_on_non_finite_evaluate_and_a_typo(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, "-m", "error-rate-argo", "--value", "[NaN]")
    assert code == 0 and out.startswith("Successful")
    code, _, err = _run(tmp_path, "-m", "error-rate-bad", "--value", "[NaN]")
    assert code == 2
    assert "spec.metrics[2].onNonFinite: onNonFinite must be one of Error, Failed" in err
