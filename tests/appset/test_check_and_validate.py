"""Issue 15: `headway validate` and `headway check` render ApplicationSets and run their
rules on the generated Applications, reporting template errors at the set's file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.cli.main import _register_all, app
from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths
from headway.source.tree import FilesystemTree

SELF = "https://github.com/example/platform.git"
ROLLOUT = Path(__file__).parents[1] / "check/fixtures/HW201-canary-without-steps/found/rollout.yaml"

SET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: services
  namespace: argocd
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
    - git:
        repoURL: {url}
        revision: HEAD
        directories:
          - path: services/*
  template:
    metadata:
      name: '{name}'
    spec:
      project: default
      source:
        repoURL: {url}
        targetRevision: HEAD
        path: '{{{{.path.path}}}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{{{.path.basename}}}}'
"""


def _repo(root: Path, name: str = "{{.path.basename}}", url: str = SELF) -> Path:
    (root / "sets").mkdir(parents=True)
    (root / "sets/services.yaml").write_text(SET.format(url=url, name=name))
    for service in ("checkout", "search"):
        (root / "services" / service).mkdir(parents=True)
    shutil.copy(ROLLOUT, root / "services/checkout/rollout.yaml")
    (root / "services/search/cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"
    )
    return root


def _loader(root: Path) -> RepositoryLoader:
    return RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF)}))


def test_check_renders_the_set_and_checks_each_generated_application(tmp_path: Path) -> None:
    context = _loader(_repo(tmp_path)).load()
    names = sorted(unit.name for unit in context.applications)
    assert names == ["checkout", "search"]
    findings = run_checks(context)
    [canary] = [f for f in findings if f.rule == "HW201"]
    assert canary.app == "checkout" and canary.file == "services/checkout/rollout.yaml"


def test_check_reports_a_template_error_at_the_template_line(tmp_path: Path) -> None:
    context = _loader(_repo(tmp_path, name="{{.path.basenme}}")).load()
    assert context.applications == ()
    [problem] = [d for d in context.load_problems if d.kind == "ApplicationSet"]
    assert (problem.file, problem.line, problem.field) == (
        "sets/services.yaml",
        17,
        "spec.template.metadata.name",
    )
    assert 'no entry for key "basenme"' in problem.message
    findings = run_checks(context)
    assert any(f.file == "sets/services.yaml" and f.line == 17 for f in findings)


def test_check_says_when_a_generator_repository_is_not_at_hand(tmp_path: Path) -> None:
    context = _loader(_repo(tmp_path, url="https://github.com/example/other.git")).load()
    [problem] = [d for d in context.load_problems if d.kind == "ApplicationSet"]
    assert problem.severity is Severity.ERROR  # never skipped silently, as HW002 for a source
    assert "not available" in problem.message and "was not rendered" in problem.message
    [finding] = [f for f in run_checks(context) if f.file == "sets/services.yaml"]
    assert finding.rule == "HW003"
    # Not "headway validate rejects it" (gitops-cert-level-2-examples' cluster-git set, whose
    # generator reads argo-cd's repository): validate only says it cannot read repositories.
    assert finding.message.endswith(
        "was not rendered: the Applications it generates were not checked"
    )


def test_validate_checks_generated_applications_at_the_template_line(tmp_path: Path) -> None:
    (tmp_path / "set.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\n"
        "metadata: {name: envs, namespace: argocd}\n"
        "spec:\n"
        "  generators:\n"
        "    - list: {elements: [{env: dev}, {env: prod}]}\n"
        "  template:\n"
        "    metadata: {name: 'web-{{env}}'}\n"
        "    spec:\n"
        "      project: default\n"
        "      source: {repoURL: 'https://x', path: web}\n"
        "      destination: {server: 'https://kubernetes.default.svc', namespace: '{{env}}'}\n"
        "      syncPolicy: {syncOptions: ['CreateNamespace=ture']}\n"
    )
    report = check_paths([tmp_path])
    [error] = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert (error.line, error.kind, error.field) == (
        13,
        "Application",
        "spec.syncPolicy.syncOptions[0]",
    )
    assert error.name == "web-dev"  # one report per template field, not one per generated app


def test_validate_rejects_bad_set_fields_and_notes_unrendered_git_sets(tmp_path: Path) -> None:
    _repo(tmp_path)
    text = (tmp_path / "sets/services.yaml").read_text()
    (tmp_path / "sets/services.yaml").write_text(
        text.replace('["missingkey=error"]', '["missingkey=eror"]')
    )
    report = check_paths([tmp_path / "sets"])
    [error] = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert error.field == "spec.goTemplateOptions[0]" and error.line == 8
    (tmp_path / "sets/services.yaml").write_text(text)
    [note] = check_paths([tmp_path / "sets"]).diagnostics
    assert note.severity is Severity.WARNING and note.message.startswith("not rendered:")
    # Even when the set's repository is this one: validate reads none, and says where to go
    # (before, "is not available" alone, which a newcomer read as a wrong repoURL).
    assert note.message.endswith(
        "is not available: headway validate reads no repository; headway check renders this "
        "set from the checkout"
    )


def test_check_renders_an_application_set_that_an_application_deploys(tmp_path: Path) -> None:
    """App of ApplicationSets: the set lives in another (mapped) repository, so only the
    root Application's render brings it in."""
    root = _repo(tmp_path / "platform")
    bootstrap = tmp_path / "bootstrap"
    bootstrap.mkdir()
    shutil.move(str(root / "sets/services.yaml"), bootstrap / "services.yaml")
    other = "https://github.com/example/bootstrap.git"
    (root / "root-app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: bootstrap, namespace: argocd}\n"
        "spec:\n"
        "  project: default\n"
        f"  source: {{repoURL: '{other}', path: .}}\n"
        "  destination: {server: 'https://kubernetes.default.svc', namespace: argocd}\n"
    )
    loader = RepositoryLoader(
        tree=FilesystemTree(root),
        self_urls=frozenset({normalize_url(SELF)}),
        other_trees={normalize_url(other): FilesystemTree(bootstrap)},
    )
    context = loader.load()
    assert sorted(unit.name for unit in context.applications) == ["bootstrap", "checkout", "search"]


def test_appset_generate_prints_the_applications_from_the_checkout(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".headway").mkdir()
    (root / ".headway/check.yaml").write_text(f"selfURLs: ['{SELF}']\n")
    args = ["appset", "generate", str(root / "sets/services.yaml"), "--repo", str(root)]
    _register_all()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    apps = list(yaml.safe_load_all(result.stdout))
    assert [a["metadata"]["name"] for a in apps] == ["checkout", "search"]
    assert apps[0]["spec"]["source"]["path"] == "services/checkout"


def test_appset_generate_reports_a_template_error_at_its_line(tmp_path: Path) -> None:
    root = _repo(tmp_path, name="{{.path.basenme}}")
    (root / ".headway").mkdir()
    (root / ".headway/check.yaml").write_text(f"selfURLs: ['{SELF}']\n")
    _register_all()
    result = CliRunner().invoke(
        app, ["appset", "generate", str(root / "sets/services.yaml"), "--repo", str(root)]
    )
    assert result.exit_code == 1
    assert (
        f"{root / 'sets/services.yaml'}:17: ApplicationSet/services: spec.template.metadata.name:"
        in result.stderr
    )


PREVIEWS = Path(__file__).parents[1] / "check/fixtures/HW004-set-generated-at-run-time/found"


def test_a_set_made_at_run_time_is_a_warning_naming_its_generator_not_an_error(
    tmp_path: Path,
) -> None:
    """A pullRequest generator reads open pull requests, which no checkout holds: check says
    its Applications are not checked (HW004, a warning) instead of failing with HW003, which
    no mapping could fix; validate says the same."""
    shutil.copytree(PREVIEWS, tmp_path / "sets")
    context = _loader(tmp_path).load()
    assert [d for d in context.load_problems if d.kind == "ApplicationSet"] == []
    findings = [f for f in run_checks(context) if f.file == "sets/previews.yaml"]
    assert [(f.rule, f.severity, f.line) for f in findings] == [
        ("HW004", Severity.WARNING, 11)
    ]
    assert "pull requests of example/shop" in findings[0].message
    [note] = check_paths([tmp_path / "sets"]).diagnostics
    assert note.severity is Severity.WARNING and "only at run time" in note.message


def test_an_scm_provider_set_is_a_run_time_warning_naming_its_generator(
    tmp_path: Path,
) -> None:
    """An scmProvider generator lists an organization's repositories, which no checkout holds:
    HW004 names it (before it was built, check reported the generator as not supported)."""
    text = (PREVIEWS / "previews.yaml").read_text()
    org = text.replace(
        "    - pullRequest:\n        github:\n          owner: example\n          repo: shop\n"
        "          labels: [preview]\n",
        "    - scmProvider:\n        github:\n          organization: example\n"
        "        filters: [{repositoryMatch: shop}]\n",
    )
    assert org != text
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets/previews.yaml").write_text(org)
    findings = [f for f in run_checks(_loader(tmp_path).load()) if f.file == "sets/previews.yaml"]
    assert [(f.rule, f.severity) for f in findings] == [("HW004", Severity.WARNING)]
    assert "scmProvider generator: the repositories of example" in findings[0].message
    assert "not supported" not in findings[0].message
    [note] = check_paths([tmp_path / "sets"]).diagnostics
    assert note.severity is Severity.WARNING and "only at run time" in note.message


def test_a_run_time_generator_inside_a_matrix_is_reported_the_same_way(tmp_path: Path) -> None:
    text = (PREVIEWS / "previews.yaml").read_text()
    nested = text.replace(
        "    - pullRequest:\n        github:\n          owner: example\n          repo: shop\n"
        "          labels: [preview]\n",
        "    - matrix:\n        generators:\n          - list: {elements: [{env: dev}]}\n"
        "          - pullRequest:\n              github: {owner: example, repo: shop}\n",
    )
    assert nested != text
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets/previews.yaml").write_text(nested)
    findings = [f for f in run_checks(_loader(tmp_path).load()) if f.rule in {"HW003", "HW004"}]
    assert [f.rule for f in findings] == ["HW004"]


def _generate(path: Path, repo: Path) -> tuple[int, str, str]:
    _register_all()
    result = CliRunner().invoke(app, ["appset", "generate", str(path), "--repo", str(repo)])
    return result.exit_code, result.stdout, result.stderr


def test_appset_generate_reports_an_invalid_set_instead_of_printing_nothing(
    tmp_path: Path,
) -> None:
    """A newcomer's typo in a set's own fields: validate names it, and generate used to print
    nothing and exit 0, as if the set made no Application."""
    path = tmp_path / "set.yaml"
    path.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web}\n"
        "spec:\n  goTemplate: true\n  goTemplateOptions: [missingkey=eror]\n"
        "  generators: [{list: {elements: [{env: qa}]}}]\n"
        "  template:\n    metadata: {name: 'web-{{.env}}'}\n"
        "    spec: {project: default, source: {repoURL: 'https://git.example/r.git', path: .},"
        " destination: {server: 'https://kubernetes.default.svc', namespace: web}}\n"
    )
    code, out, err = _generate(path, tmp_path)
    assert code == 1
    assert out.strip() == ""
    assert f"{path}:6: ApplicationSet/web: spec.goTemplateOptions[0]: " in err


def test_appset_generate_says_when_a_set_generates_no_application(tmp_path: Path) -> None:
    """argo-cd's design-doc/clusters.yaml: a clusters generator whose selector matches none
    of the file's cluster Secrets (and so not the local cluster either) makes nothing."""
    path = tmp_path / "set.yaml"
    path.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web}\n"
        "spec:\n  generators:\n  - clusters: {selector: {matchLabels: {env: prod}}}\n"
        "  template:\n    metadata: {name: 'web-{{name}}'}\n"
        "    spec: {project: default, source: {repoURL: 'https://git.example/r.git', path: .},"
        " destination: {server: '{{server}}', namespace: web}}\n"
    )
    code, out, err = _generate(path, tmp_path)
    assert code == 0
    assert out.strip() == ""
    assert err.strip() == (
        f"{path}:5: ApplicationSet/web: spec.generators: info: generated no Application from "
        "this checkout: its clusters generator reads the cluster Secrets Argo CD holds, and "
        "this repository holds none that it selects (or another generator combined with it "
        "gave nothing); the Applications it makes for the clusters registered at run time are "
        "not checked here"
    )


def test_appset_generate_names_a_yaml_error_at_its_line(tmp_path: Path) -> None:
    """argo-cd's Use-Cases documentation writes `repoURL: {{.app.source}}` unquoted: the file
    is not YAML, which generate used to report as 'holds no argoproj.io ApplicationSet'."""
    path = tmp_path / "set.yaml"
    path.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web}\n"
        "spec:\n  template:\n    spec:\n      source:\n        repoURL: {{.app.source}}\n"
    )
    code, out, err = _generate(path, tmp_path)
    assert (code, out.strip()) == (1, "")
    assert err.startswith(f"{path}:8: YAML syntax error: found unhashable key (a value that")
