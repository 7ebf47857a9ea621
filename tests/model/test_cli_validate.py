"""`headway validate`: exit codes, text summary, JSON shape."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from source.gitrepos import require_extra

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    if not any(c.name == "validate" for c in app.registered_commands):
        _register_all()
    return CliRunner()


def test_example_repo_is_valid(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["validate", "examples/gitops-repo"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "8 files, 8 objects: 0 errors, 0 warnings"


def test_invalid_examples_exit_1_with_plain_lines(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["validate", "examples/invalid"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert (
        "examples/invalid/bad-pause-duration.yaml:18: Rollout/checkout: "
        'spec.strategy.canary.steps[1].pause.duration: "2 minutes" is not a duration'
    ) in lines
    assert "\x1b[" not in result.output  # no colour codes when not a terminal
    assert lines[-1].startswith("7 files, 10 objects: ")
    assert lines[-1].endswith(" errors, 1 warning")


def test_warnings_alone_exit_0(runner: CliRunner, tmp_path: Path) -> None:
    manifest = tmp_path / "p.yaml"
    manifest.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p}\n"
        "spec: {sourceRepo: ['*']}\n"
    )
    result = runner.invoke(app, ["validate", str(manifest)])
    assert result.exit_code == 0
    assert "did you mean sourceRepos?" in result.output
    assert result.output.strip().splitlines()[-1] == "1 file, 1 object: 0 errors, 1 warning"


def test_json_format(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(
        app, ["validate", "--format", "json", "examples/invalid/bad-pause-duration.yaml"]
    )
    assert result.exit_code == 1
    assert json.loads(result.output) == [
        {
            "file": "examples/invalid/bad-pause-duration.yaml",
            "line": 18,
            "kind": "Rollout",
            "name": "checkout",
            "field": "spec.strategy.canary.steps[1].pause.duration",
            "severity": "error",
            "message": '"2 minutes" is not a duration',
        }
    ]


def test_json_empty_list_when_clean(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["validate", "-o", "json", "examples/gitops-repo"])
    assert result.exit_code == 0
    assert json.loads(result.output) == []


@pytest.mark.parametrize(
    "args",
    [["validate"], ["validate", "does/not/exist"], ["validate", "--format", "xml", "."]],
)
def test_bad_usage_exits_2(runner: CliRunner, args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_terminal_output_is_coloured_but_says_the_same(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    from headway.cli.text_lines import print_lines
    from headway.cli.validate import summary_line, text_lines
    from headway.source.manifest_files import check_paths

    monkeypatch.chdir(REPO)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "300")
    report = check_paths(["examples/invalid/core-objects.yaml"])
    out = _Terminal() if terminal else io.StringIO()
    print_lines(text_lines(report), stream=out)
    assert ("\x1b[" in out.getvalue()) is terminal
    expected = [str(d) for d in report.diagnostics] + [summary_line(report)]
    assert re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines() == expected


def test_example_repo_also_passes_headway_check(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["check", "examples/gitops-repo"])
    assert result.exit_code == 0, result.output
    assert "0 errors, 0 warnings" in result.output


def test_a_helm_chart_is_said_to_be_skipped(runner: CliRunner, tmp_path: Path) -> None:
    """Before: `0 files, 0 objects: 0 errors, 0 warnings`, as if the chart were clean."""
    chart = tmp_path / "charts" / "web"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n")
    (chart / "templates" / "deployment.yaml").write_text("kind: {{ .Values.kind }}\n")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert lines[0].startswith(f"{chart}: info: skipped: a Helm chart")
    assert f"helm template {chart}" in lines[0] and "headway check" in lines[0]
    assert lines[-1] == "0 files, 0 objects: 0 errors, 0 warnings (1 Helm chart skipped)"


def test_jsonnet_files_are_evaluated_and_their_objects_validated(
    runner: CliRunner, tmp_path: Path
) -> None:
    """argocd-example-apps' jsonnet-guestbook: once `0 files, 0 objects: 0 errors` (nothing
    read), then an error on every `.jsonnet` file; now each is evaluated, importing beside it,
    and what it produces is validated like YAML. One that needs its Application's values is
    left to `headway check` with a note."""
    require_extra("_gojsonnet", "jsonnet")
    app_dir = tmp_path / "jsonnet-guestbook"
    app_dir.mkdir()
    (app_dir / "guestbook-ui.jsonnet").write_text(
        "local p = import 'params.libsonnet';\n"
        "[{ apiVersion: 'v1', kind: 'Service', metadata: { name: p.name } },\n"
        " { apiVersion: 'v1', kind: 'Service' }]\n"
    )
    (app_dir / "params.libsonnet").write_text("{ name: 'guestbook-ui' }\n")
    (app_dir / "tla.jsonnet").write_text("function(name) { kind: name }\n")
    (app_dir / "typo.jsonnet").write_text("{\n  kind: 'Service',,\n}\n")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0].startswith(f"{app_dir / 'guestbook-ui.jsonnet'}:1: Service/<unnamed>: ")
    assert "metadata.name" in lines[0]
    assert lines[1].startswith(f"{app_dir / 'tla.jsonnet'}: info: not evaluated: it needs")
    assert lines[2].startswith(f"{app_dir / 'typo.jsonnet'}:2: Jsonnet evaluation of ")
    assert lines[-1] == "3 files, 2 objects: 2 errors, 0 warnings (1 Jsonnet file left to check)"


def test_rollout_feature_examples_validate_and_check_clean(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/rollouts: a workloadRef migration and an experiment step (whose analysis
    counts as the canary's gate for HW202, and whose template reference is checked)."""
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["validate", "examples/rollouts"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "2 files, 5 objects: 0 errors, 0 warnings"
    result = runner.invoke(app, ["check", "examples/rollouts"])
    assert result.exit_code == 0, result.output
    assert "0 errors, 0 warnings" in result.output


def test_with_plugins_dir_an_unknown_plugin_name_and_a_bad_plugin_yaml_are_named(
    runner: CliRunner, tmp_path: Path
) -> None:
    plugins = tmp_path / "plugins"
    (plugins / "envsubst").mkdir(parents=True)
    (plugins / "envsubst" / "plugin.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\n"
        "metadata: {name: envsubst}\nspec:\n  version: v2\n  generate: {command: [envsubst]}\n"
    )
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: shop, namespace: argocd}\nspec:\n  project: default\n  source:\n"
        "    repoURL: https://example.com/repo.git\n    path: shop\n"
        "    plugin: {name: envsubst}\n"
        "  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"
    )
    result = runner.invoke(app, ["validate", str(manifest), "--plugins-dir", str(plugins)])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"{manifest}:9: Application/shop: spec.source.plugin.name: no plugin 'envsubst' "
        f"(configured plugins in {plugins}: envsubst-v2)"
    )
    assert runner.invoke(app, ["validate", str(manifest)]).exit_code == 0
    (plugins / "envsubst" / "plugin.yaml").write_text("kind: ConfigManagementPlugin\n")
    result = runner.invoke(app, ["validate", str(manifest), "--plugins-dir", str(plugins)])
    assert result.exit_code == 2
    assert f"{plugins}/envsubst/plugin.yaml:1: metadata.name: must be set" in result.output
