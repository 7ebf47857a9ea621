"""`headway check` end to end: output formats, exit codes, config, opt-outs, --revision."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from check.conftest import FIXTURES
from check.gitrepo import commit_states
from headway.check.registry import ALL_RULES
from headway.cli.main import _register_all, app

CLEAN = FIXTURES / "repos" / "clean"
JSON_KEYS = {"rule", "severity", "file", "line", "app", "resource", "message", "hint"}

_register_all()
runner = CliRunner()


def _repo(tmp_path: Path, *states: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    commit_states(root, *states)
    return root


def _variant(tmp_path: Path, name: str, edit: tuple[str, str, str]) -> Path:
    """A copy of the clean repository with one text replacement in one file."""
    target = tmp_path / name
    shutil.copytree(CLEAN, target)
    file, old, new = edit
    text = (target / file).read_text()
    assert old in text
    (target / file).write_text(text.replace(old, new))
    return target


NO_FINALIZER = (
    "apps/checkout.yaml",
    "  finalizers:\n    - resources-finalizer.argocd.argoproj.io\n",
    "",
)
DEFAULT_PROJECT = ("apps/checkout.yaml", "project: workloads", "project: default")


def _use_default_project(state: Path) -> None:
    file = state / "apps/checkout.yaml"
    file.write_text(file.read_text().replace("project: workloads", "project: default"))


def _check(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["check", *args])
    return result.exit_code, result.output


def test_clean_repository_exits_zero_with_plain_text(tmp_path: Path) -> None:
    code, output = _check(str(_repo(tmp_path, CLEAN)))
    assert code == 0, output
    assert "1 Application checked: 0 errors, 0 warnings, 0 infos" in output
    assert "\x1b[" not in output  # not a terminal: no colour codes


def test_error_exits_one_and_json_has_the_documented_keys(tmp_path: Path) -> None:
    state = _variant(tmp_path, "state", DEFAULT_PROJECT)
    code, output = _check(str(_repo(tmp_path, state)), "--format", "json")
    assert code == 1
    rows = json.loads(output)
    assert rows and all(set(row) == JSON_KEYS for row in rows)
    row = next(r for r in rows if r["rule"] == "HW301")
    assert row["file"] == "apps/checkout.yaml" and row["line"] == 9
    assert row["app"] == "checkout" and row["resource"] == "Application/argocd/checkout"
    assert row["severity"] == "error"


def test_warning_fails_only_with_strict(tmp_path: Path) -> None:
    root = _repo(tmp_path, _variant(tmp_path, "state", NO_FINALIZER))
    assert _check(str(root))[0] == 0
    code, output = _check(str(root), "--strict")
    assert code == 1 and "HW303" in output


def test_sarif_is_2_1_0_with_rule_metadata(tmp_path: Path) -> None:
    state = _variant(tmp_path, "state", DEFAULT_PROJECT)
    code, output = _check(str(_repo(tmp_path, state)), "--format", "sarif")
    assert code == 1
    log = json.loads(output)
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in ALL_RULES]
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] and location["region"]["startLine"] >= 1


@pytest.mark.parametrize("config_name", [".headway/check.yaml", "headway-check.yaml"])
def test_config_disables_rules(tmp_path: Path, config_name: str) -> None:
    state = _variant(tmp_path, "state", DEFAULT_PROJECT)
    config = state / config_name
    config.parent.mkdir(exist_ok=True)
    config.write_text("disable: [HW301]\n")
    code, output = _check(str(_repo(tmp_path, state)))
    assert code == 0, output
    assert "HW301" not in output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("disable: [HW999]\n", "not a Headway rule"),
        ("disabled: [HW301]\n", "unknown key"),
        ("repositories: [a]\n", "repositories"),
        ("disable: [\n", "check.yaml:2: YAML syntax error: did not find expected node content"),
        ("drill: {scenario: errors=lots}\n", "check.yaml: drill.scenario: errors=lots"),
        ("drill: {maxFalseAborts: 150%}\n", "check.yaml: drill.maxFalseAborts"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path: Path, text: str, message: str) -> None:
    state = tmp_path / "state"
    shutil.copytree(CLEAN, state)
    (state / ".headway").mkdir()
    (state / ".headway" / "check.yaml").write_text(text)
    result = runner.invoke(app, ["check", str(_repo(tmp_path, state))])
    assert result.exit_code == 2
    assert message in result.output


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    root = _repo(tmp_path, CLEAN)
    assert _check(str(tmp_path / "missing"))[0] == 2
    assert _check(str(root), "--format", "xml")[0] == 2
    assert _check(str(root), "--config", str(tmp_path / "none.yaml"))[0] == 2
    assert _check(str(root), "--revision", "no-such-branch")[0] == 2


def test_annotation_with_reason_silences_the_rule(tmp_path: Path) -> None:
    reason = '  annotations:\n    headway.dev/check-disable: "HW301: the sandbox cluster only"\n'
    edit = ("apps/checkout.yaml", "  finalizers:\n", reason + "  finalizers:\n")
    state = _variant(tmp_path, "state", edit)
    _use_default_project(state)
    code, output = _check(str(_repo(tmp_path, state)))
    assert code == 0, output
    assert "HW301" not in output and "HW001" not in output


def test_annotation_without_reason_is_a_finding_and_silences_nothing(tmp_path: Path) -> None:
    edit = (
        "apps/checkout.yaml",
        "  finalizers:\n",
        '  annotations:\n    headway.dev/check-disable: "HW301"\n  finalizers:\n',
    )
    state = _variant(tmp_path, "state", edit)
    _use_default_project(state)
    code, output = _check(str(_repo(tmp_path, state)), "--format", "json")
    assert code == 1
    rules = {row["rule"] for row in json.loads(output)}
    assert {"HW001", "HW301"} <= rules


def test_revision_reads_the_commit_not_the_files(tmp_path: Path) -> None:
    broken = _variant(tmp_path, "broken", DEFAULT_PROJECT)
    root = _repo(tmp_path, broken, CLEAN)
    assert _check(str(root))[0] == 0
    code, output = _check(str(root), "--revision", "HEAD~1", "--format", "json")
    assert code == 1
    assert any(row["rule"] == "HW301" for row in json.loads(output))


def test_other_repository_mapped_by_config(tmp_path: Path) -> None:
    state = _variant(
        tmp_path,
        "state",
        ("apps/checkout.yaml", "example/fixtures.git", "example/checkout-manifests.git"),
    )
    project = state / "projects/workloads.yaml"  # the project permits the other repository
    project.write_text(
        project.read_text().replace(
            "sourceRepos: [https://github.com/example/fixtures.git]",
            "sourceRepos: [https://github.com/example/fixtures.git,"
            " https://github.com/example/checkout-manifests.git]",
        )
    )
    unmapped = _repo(tmp_path, state)
    code, output = _check(str(unmapped), "--format", "json")
    assert code == 1 and any(r["rule"] == "HW002" for r in json.loads(output))
    config = tmp_path / "check.yaml"
    config.write_text(
        f"repositories:\n  https://github.com/example/checkout-manifests.git: {unmapped}\n"
    )
    code, output = _check(str(unmapped), "--config", str(config), "--format", "json")
    assert code == 0, output


def test_a_config_that_is_not_text_is_a_usage_error(tmp_path: Path) -> None:
    root = _repo(tmp_path, CLEAN)
    config = tmp_path / "check.yaml"
    config.write_bytes(b"\xe5\xff\x00")
    code, output = _check(str(root), "--config", str(config))
    assert code == 2
    assert f"{config}:1: not UTF-8 text" in output
