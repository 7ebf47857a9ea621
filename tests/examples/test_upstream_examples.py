"""The Argo projects' own examples, as a newcomer would try them: each fixture here follows one
upstream example (its header names which) and must validate with no error and pass
`headway check` with no error but the ones Headway raises on purpose, listed below with why.

docs/examples.md lists every upstream example tried, including those that do not run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from headway.check.findings import Finding
from headway.cli.check import run_check
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths
from headway.source.plugins import load_plugins
from headway.source.render import RenderRequest, render
from headway.source.tree import FilesystemTree
from source.gitrepos import require_extra

HERE = Path(__file__).resolve().parent
ROLLOUTS = HERE / "argo_rollouts"
ARGOCD_APPS = HERE / "argocd_example_apps"
# The admin's config management plugins for the argocd-example-apps fixtures (`--plugins-dir`).
PLUGINS = HERE / "argocd_plugins"
ROLLOUT_EXAMPLES = sorted(p.name for p in ROLLOUTS.iterdir() if p.is_dir())

# Findings Headway reports on purpose on an upstream example (docs/checks.md says why).
INTENDED_ERRORS = {
    # A canary with no steps is a rolling update with no gate.
    "rolling_update": {("HW201", "Rollout/shop-rolling")},
}
# Every upstream Application uses the `default` project, which allows any destination and kind.
APP_NAMES = (
    "guestbook",
    "helm-guestbook",
    "jsonnet-guestbook",
    "jsonnet-guestbook-tla",
    "kustomize-guestbook",
    "pre-post-sync",
    "python-build",
    "sync-waves",
)
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
    findings, apps = run_check(ARGOCD_APPS, plugins=load_plugins(PLUGINS))
    assert apps == len(APP_NAMES)
    assert _errors(findings) == INTENDED_APP_ERRORS


def test_the_plugin_example_without_its_plugin_is_an_unresolved_source() -> None:
    findings, _apps = run_check(ARGOCD_APPS)
    [unresolved] = [f for f in findings if f.rule == "HW002"]
    assert unresolved.resource == "Application/argocd/python-build"
    assert "no plugin's discover rules match plugins/python-build" in unresolved.message


def test_the_plugin_example_renders_with_its_env_and_parameters() -> None:
    application = yaml.safe_load((ARGOCD_APPS / "apps" / "python-build.yaml").read_text())
    request = RenderRequest(
        source=application["spec"]["source"],
        tree=FilesystemTree(ARGOCD_APPS),
        app_name="python-build",
        plugins=load_plugins(PLUGINS),
    )
    result = render(request)
    assert result.ok, result.diagnostics
    service, deployment = result.documents
    assert (service.kind, service.name) == ("Service", "built-guestbook")
    assert (deployment.kind, deployment.name) == ("Deployment", "built-guestbook")
    assert deployment.obj["spec"]["replicas"] == 2
    assert deployment.file == "plugin python-build-v1.0 output for plugins/python-build"


@pytest.mark.parametrize(
    ("app", "name", "replicas"),
    [
        ("jsonnet-guestbook", "jsonnet-guestbook-ui", 1),
        ("jsonnet-guestbook-tla", "guestbook-tla", 2),
    ],
)
def test_the_jsonnet_examples_render_with_their_applications_arguments(
    app: str, name: str, replicas: int
) -> None:
    require_extra("_gojsonnet", "jsonnet")
    application = yaml.safe_load((ARGOCD_APPS / "apps" / f"{app}.yaml").read_text())
    request = RenderRequest(
        source=application["spec"]["source"], tree=FilesystemTree(ARGOCD_APPS), app_name=app
    )
    result = render(request)
    assert result.ok, result.diagnostics
    assert [(d.kind, d.name) for d in result.documents] == [("Service", name), ("Deployment", name)]
    assert result.documents[1].obj["spec"]["replicas"] == replicas
