"""The Argo projects' own examples, as a newcomer would try them: each fixture here follows one
upstream example (its header names which) and must validate with no error and pass
`headway check` with no error but the ones Headway raises on purpose, listed below with why.

docs/examples.md lists every upstream example tried, including those that do not run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.check.findings import Finding
from headway.cli.check import run_check
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

HERE = Path(__file__).resolve().parent
ROLLOUTS = HERE / "argo_rollouts"
ARGOCD_APPS = HERE / "argocd_example_apps"
ROLLOUT_EXAMPLES = sorted(p.name for p in ROLLOUTS.iterdir() if p.is_dir())

# Findings Headway reports on purpose on an upstream example (docs/checks.md says why).
INTENDED_ERRORS = {
    # A canary with no steps is a rolling update with no gate.
    "rolling_update": {("HW201", "Rollout/shop-rolling")},
}
# Every upstream Application uses the `default` project, which allows any destination and kind.
APP_NAMES = ("guestbook", "helm-guestbook", "kustomize-guestbook", "pre-post-sync", "sync-waves")
INTENDED_APP_ERRORS = {("HW301", f"Application/argocd/{name}") for name in APP_NAMES}


def _errors(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.resource) for f in findings if f.severity is Severity.ERROR}


@pytest.mark.parametrize("example", ROLLOUT_EXAMPLES)
def test_each_rollouts_example_validates(example: str) -> None:
    report = check_paths([ROLLOUTS / example])
    assert [d for d in report.diagnostics if d.severity is Severity.ERROR] == []
    assert report.objects >= 1


@pytest.mark.parametrize("example", ROLLOUT_EXAMPLES)
def test_each_rollouts_example_passes_check_but_for_intended_errors(example: str) -> None:
    findings, _apps = run_check(ROLLOUTS / example)
    assert _errors(findings) == INTENDED_ERRORS.get(example, set())


def test_the_argocd_example_apps_validate() -> None:
    report = check_paths([ARGOCD_APPS])
    assert [d for d in report.diagnostics if d.severity is not Severity.INFO] == []
    assert report.objects >= 15


def test_every_argocd_example_app_renders_and_passes_check_but_for_the_default_project() -> None:
    """Directory, Kustomize (with a base outside the app path), Helm, hooks and waves all render
    from the checkout: an unrendered source would be an HW002 error here."""
    findings, apps = run_check(ARGOCD_APPS)
    assert apps == len(APP_NAMES)
    assert _errors(findings) == INTENDED_APP_ERRORS
