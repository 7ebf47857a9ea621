"""`headway check` keeps what validation said of each document of an unchanged file
(`cli/check_validation.py`, stored with the drill answers), and validates again whatever
changed: another file's bytes, another path, a document rendered by a tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli import check_validation
from headway.cli.main import _register_all, app
from headway.model.validate import validate_documents

_register_all()
runner = CliRunner()
URL = "https://github.com/example/answers.git"

APPLICATION = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: web, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{URL}", targetRevision: HEAD, path: web}}
  destination: {{server: "https://kubernetes.default.svc", namespace: web}}
"""
ROLLOUT = """# the object starts on line 2
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: {name}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: app, image: "web:1"}}]}}
  strategy:
    canary:
      steps: [{{setWeight: {weight}}}, {{pause: {{}}}}]
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, annotations: {{argocd.argoproj.io/sync-wave: 1}}}}
spec: {{selector: {{app: web}}, ports: [{{port: 80}}]}}
"""


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The documents validation looked at in a run, as `file#index`."""
    seen: list[str] = []

    def counting(docs, *, memo=None):  # type: ignore[no-untyped-def]
        docs = list(docs)
        seen.extend(f"{d.file}#{d.index}" for d in docs)
        return validate_documents(docs, memo=memo)

    monkeypatch.setattr(check_validation, "validate_documents", counting)
    return seen


def _repo(root: Path) -> Path:
    (root / "web").mkdir(parents=True)
    (root / "headway-check.yaml").write_text(f"selfURLs: [{URL}]\n")
    (root / "app.yaml").write_text(APPLICATION)
    (root / "web" / "a.yaml").write_text(ROLLOUT.format(name="a", weight=120))
    (root / "web" / "b.yaml").write_text(ROLLOUT.format(name="b", weight=20))
    return root


def _check(root: Path, *options: str) -> str:
    result = runner.invoke(app, ["check", "-o", "json", *options, str(root)])
    return f"exit {result.exit_code}\n{result.output}"


def test_an_unchanged_file_is_not_validated_again_and_says_the_same(
    tmp_path: Path, validated: list[str]
) -> None:
    root = _repo(tmp_path / "repo")
    uncached = _check(root, "--no-cache")
    assert "120 is outside" in uncached and "sync-wave" in uncached  # errors of both kinds to keep
    validated.clear()
    assert _check(root) == uncached  # the first run computes and keeps
    assert "web/a.yaml#0" in validated
    validated.clear()
    assert _check(root) == uncached  # the second recalls every document
    assert validated == []


def test_a_changed_file_is_validated_again(tmp_path: Path, validated: list[str]) -> None:
    root = _repo(tmp_path / "repo")
    _check(root)
    (root / "web" / "a.yaml").write_text(ROLLOUT.format(name="a", weight=30))
    validated.clear()
    fixed = _check(root)
    assert sorted(validated) == ["web/a.yaml#0", "web/a.yaml#1"]
    assert fixed == _check(root, "--no-cache")
    assert "120" not in fixed


def test_the_same_bytes_at_another_path_name_their_own_path(
    tmp_path: Path, validated: list[str]
) -> None:
    root = _repo(tmp_path / "repo")
    _check(root)
    (root / "web" / "c.yaml").write_bytes((root / "web" / "a.yaml").read_bytes())
    validated.clear()
    output = _check(root)
    assert sorted(validated) == ["web/c.yaml#0", "web/c.yaml#1"]
    assert output == _check(root, "--no-cache")
    assert "web/c.yaml" in output
