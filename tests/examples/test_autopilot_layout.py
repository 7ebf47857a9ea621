"""The repository layout argoproj-labs/argocd-autopilot (c102467) generates, as a newcomer's
autopilot repository holds it: autopilot_layout/ follows what its `repo bootstrap`, `project
create` and `app create` write (headway-check.yaml there names the code).

docs/examples.md says what each remaining error is and why it stays.
"""

from __future__ import annotations

from pathlib import Path

from headway.check.findings import Finding
from headway.cli.check import run_check
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

HERE = Path(__file__).resolve().parent / "autopilot_layout"
BOOTSTRAP_APPS = ("argo-cd", "cluster-resources-in-cluster", "root")


def _errors(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.resource) for f in findings if f.severity is Severity.ERROR}


def test_the_generated_manifests_validate_but_for_allow_empty_as_a_sync_option() -> None:
    """Go's marshalled `creationTimestamp: null` and `status:` blocks are read as Argo CD
    reads them; `allowEmpty=true` in syncOptions is the one error, and it says where the
    field belongs."""
    report = check_paths([HERE])
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert sorted(d.name for d in errors) == ["argo-cd", "root"]
    assert all("spec.syncPolicy.automated.allowEmpty" in d.message for d in errors)


def test_the_project_set_generates_the_app_from_its_config_json() -> None:
    """root renders projects/, whose ApplicationSet (two git files generators, each with a
    generator-level template) generates testing-hello-world in project testing."""
    findings, apps = run_check(HERE)
    assert apps == len(BOOTSTRAP_APPS) + 1
    assert _errors(findings) == {
        *{("HW301", f"Application/argocd/{name}") for name in BOOTSTRAP_APPS},
        ("HW302", "Application/argocd/testing-hello-world"),
        ("HW003", "Application/argo-cd"),
        ("HW003", "Application/root"),
    }
