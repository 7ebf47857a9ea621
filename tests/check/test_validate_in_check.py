"""`headway check` reports every error `headway validate` finds (HW003), not 0 findings."""

from __future__ import annotations

import shutil
from pathlib import Path

from headway.check.registry import run_checks
from headway.cli.check import run_check
from headway.cli.check_loader import RepositoryLoader
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths
from headway.source.tree import FilesystemTree

INVALID = Path(__file__).parents[2] / "examples" / "invalid"


def test_check_includes_every_validate_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(INVALID, root)
    report = check_paths([root])
    errors = {
        (Path(d.file).relative_to(root).as_posix(), d.line)
        for d in report.diagnostics
        if d.severity is Severity.ERROR
    }
    assert len(errors) > 20  # the examples hold one broken manifest per problem class
    loader = RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset())
    findings = run_checks(loader.load())
    invalid = {(f.file, f.line) for f in findings if f.rule == "HW003"}
    assert errors <= invalid, sorted(errors - invalid)


def test_schema_finding_names_field_and_says_validate_rejects_it(tmp_path: Path) -> None:
    (tmp_path / "rollout.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n"
        "  template: {metadata: {labels: {app: web}}}\n"
        "  strategy: {canary: {steps: [{setWeight: 150}]}}\n"
    )
    loader = RepositoryLoader(tree=FilesystemTree(tmp_path), self_urls=frozenset())
    [finding] = [f for f in run_checks(loader.load()) if f.rule == "HW003"]
    assert finding.resource == "Rollout/web" and finding.line == 7
    assert finding.message.startswith("spec.strategy.canary.steps[0].setWeight: 150 is outside")
    assert "headway validate rejects it" in finding.message


def test_an_invalid_object_kustomize_renders_is_reported_once_at_its_line(tmp_path: Path) -> None:
    """rollouts-demo's `examples/analysis`: an Application renders a kustomization holding a
    Rollout `headway validate` rejects. The scan reports it at its line; the rendered copy
    (line 1: Kustomize's output has no lines of the file) used to repeat it."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources: [rollout.yaml]\n")
    (app / "rollout.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n"
        "  template: {metadata: {labels: {app: web}}}\n"
        "  strategy: {canary: {steps: [{setWeight: 150}]}}\n"
    )
    (tmp_path / "application.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: web, namespace: argocd}\n"
        "spec:\n  project: web\n"
        "  source: {repoURL: 'https://example.com/r.git', path: app, targetRevision: HEAD}\n"
        "  destination: {server: 'https://kubernetes.default.svc', namespace: web}\n"
    )
    (tmp_path / "headway-check.yaml").write_text("selfURLs: [https://example.com/r.git]\n")
    findings, apps = run_check(tmp_path)
    assert apps == 1
    assert [f.rule for f in findings if f.severity is Severity.ERROR] == ["HW003"]
    [invalid] = [f for f in findings if f.rule == "HW003"]
    assert (invalid.file, invalid.line) == ("app/rollout.yaml", 7)
