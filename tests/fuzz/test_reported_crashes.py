"""The three tracebacks of issue 16.9, each now a clear error with the documented exit status."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.model.validate import validate_text

REF_AS_MAP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  sources:
    - repoURL: https://git.example/values.git
      targetRevision: main
      ref: {name: values}
    - repoURL: https://git.example/chart.git
      path: chart
      helm:
        valueFiles: [$values/prod.yaml]
"""


def _headway(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _register_all()
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_validate_a_ref_given_as_a_map_with_a_values_file_names_the_field() -> None:
    report = validate_text(REF_AS_MAP, "app.yaml")
    assert [str(d) for d in report.diagnostics] == [
        "app.yaml:10: Application/shop: spec.sources[0].ref: expected a string, got a mapping"
    ]


def test_apply_a_twenty_digit_namespace_is_an_error_not_an_overflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        "  namespace: 12345678901234567890\n"
    )
    code, out, err = _headway(
        "apply", "-f", "cm.yaml", "--state-dir", "state", cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert (code, out) == (1, "")
    assert err == (
        "error: cm.yaml:1: configmap/c: ConfigMap c: metadata.namespace: "
        "12345678901234567890 is not a valid namespace name\n"
    )


def test_evaluate_a_five_thousand_digit_value_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "t.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: t}\n"
        "spec:\n  metrics:\n  - name: m\n    successCondition: result[0] < 1\n"
    )
    value = "[" + "9" * 5000 + "]"
    code, out, err = _headway(
        "analysis", "evaluate", "t.yaml", "-m", "m", "--value", value,
        cwd=tmp_path, monkeypatch=monkeypatch,
    )  # fmt: skip
    assert (code, out) == (2, "")
    limit = sys.get_int_max_str_digits()
    assert err == f"error: --value has an integer of more than {limit} digits\n"


def test_apply_an_object_whose_metadata_is_not_a_mapping_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the fuzzing of `apply -f` (TypeError reading `metadata: true`)."""
    (tmp_path / "run.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisRun\nmetadata: true\nspec: {}\n"
    )
    code, out, err = _headway(
        "apply", "-f", "run.yaml", "--state-dir", "state", cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert (code, out) == (1, "")
    label = "analysisrun.argoproj.io/(no name)"
    assert err == f"error: run.yaml:1: {label}: AnalysisRun: metadata: required mapping\n"


def test_apply_a_yaml_date_inside_a_spec_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by fuzzing the store's writes: an unquoted date (YAML reads it as a date) in a
    field the store keeps as written raised TypeError while serializing it."""
    (tmp_path / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
        "spec:\n  ports: [{port: 80}]\n  releasedOn: 2024-01-02\n"
    )
    code, out, err = _headway(
        "apply", "-f", "svc.yaml", "--state-dir", "state", cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert (code, out) == (1, "")
    assert err == (
        "error: svc.yaml:1: service/web: Service web: spec.releasedOn: date 2024-01-02 is not "
        "a JSON value (quote it)\n"
    )
