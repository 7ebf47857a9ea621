"""codefresh-contrib/gitops-certification-examples (commit b2212aa), as a newcomer would check
it: the fixtures in certification_examples/ follow its structure (each file says which part).

docs/examples.md lists what else of that repository was tried and what it found.
"""

from __future__ import annotations

from pathlib import Path

from headway.check.findings import Finding
from headway.cli.check import run_check
from headway.model.diagnostics import Severity

HERE = Path(__file__).resolve().parent / "certification_examples"
APPS = ("child-1", "child-2", "parent")


def _errors(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.resource) for f in findings if f.severity is Severity.ERROR}


def test_an_app_of_apps_over_plain_application_files_is_not_a_repeated_definition() -> None:
    """The scan reads each child file and the parent renders the same file: one definition
    (before: HW321 on every child, naming the child's own document as the first definition).
    Only the upstream's `project: default` remains an error (HW301, on purpose)."""
    findings, apps = run_check(HERE)
    assert apps == len(APPS)
    assert _errors(findings) == {("HW301", f"Application/argocd/{name}") for name in APPS}
