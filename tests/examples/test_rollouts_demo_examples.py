"""argoproj/rollouts-demo's `examples/` as a newcomer brings them: fixtures written for Headway
after each example (their headers name which), with an Application per example directory as
the newcomer writes it (upstream has none), checked like a repository of theirs.

docs/examples.md lists every rollouts-demo example tried, with what does not run and why.
"""

from __future__ import annotations

from pathlib import Path

from headway.check.findings import Finding
from headway.cli.check import run_check
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

DEMO = Path(__file__).resolve().parent / "rollouts_demo"
EXAMPLES = ("analysis", "blue-green", "canary", "experiment", "istio", "rollout-experiment")

# What check says on purpose (docs/checks.md), and nothing else.
EXPECTED_WARNINGS = {
    # examples/base is shared by two Applications that both render it from HEAD.
    ("HW317", "Application/argocd/demo-analysis"),
    # The analysis example's query reads the whole Ingress, not the canary...
    ("HW203", "AnalysisTemplate/storefront-success-rate"),
    # ...and its success ratio above 0.90 never aborts a canary going from 1% to 5% errors.
    ("HW214", "Rollout/storefront"),
    # The canary example has no analysis at all.
    ("HW202", "Rollout/storefront"),
    # The istio example's gate is the same success ratio over the canary Service (scoped:
    # no HW203; read as a success ratio: HW214, never HW215's false aborts)...
    ("HW214", "Rollout/storefront-istio/storefront"),
    # ...and its Application does not ignore the weights the Rollout sets.
    ("HW306", "VirtualService/storefront-istio/storefront-vsvc"),
}


def _by_severity(findings: list[Finding], severity: Severity) -> set[tuple[str, str]]:
    return {(f.rule, f.resource) for f in findings if f.severity is severity}


def test_the_rollouts_demo_fixtures_validate_with_nothing_to_say() -> None:
    report = check_paths([DEMO])
    assert [str(d) for d in report.diagnostics] == []
    assert report.objects >= 30


def test_every_example_renders_through_its_application_and_checks_without_error() -> None:
    findings, apps = run_check(DEMO)
    assert apps == len(EXAMPLES)
    assert _by_severity(findings, Severity.ERROR) == set()
    assert _by_severity(findings, Severity.WARNING) == EXPECTED_WARNINGS
    rendered = {f.file.split("/")[1] for f in findings if f.file.startswith("examples/")}
    assert rendered == {"analysis", "canary", "istio"}  # the examples with something to say
