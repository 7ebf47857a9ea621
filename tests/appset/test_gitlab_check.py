"""`headway check` reads GitLab scmProvider and pullRequest generators as it reads GitHub's:
their Applications exist only at run time (HW004), and an `api` naming a self-hosted GitLab
warns that a controller with the default flags refuses it (HW320); gitlab.com does not."""

from __future__ import annotations

from pathlib import Path

from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.model.diagnostics import Severity
from headway.source.tree import FilesystemTree

SELF = "https://gitlab.com/example-group/platform.git"

SET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: group-apps
  namespace: argocd
spec:
  goTemplate: true
  generators:
    - scmProvider:
        gitlab:
          group: example-group
          includeSubgroups: true
{scm_api}
    - pullRequest:
        gitlab:
          project: example-group/shop
          pullRequestState: opened
{pr_api}
  template:
    metadata:
      name: 'app-{{{{.branch_slug}}}}'
    spec:
      project: default
      source:
        repoURL: https://gitlab.com/example-group/shop.git
        targetRevision: '{{{{.branch}}}}'
        path: deploy
      destination:
        server: https://kubernetes.default.svc
        namespace: apps
"""


def _findings(tmp_path: Path, *, scm_api: str = "", pr_api: str = "") -> list[tuple[str, int, str]]:
    (tmp_path / "sets").mkdir()
    text = SET.format(
        scm_api=f"          api: {scm_api}" if scm_api else "",
        pr_api=f"          api: {pr_api}" if pr_api else "",
    )
    (tmp_path / "sets/group-apps.yaml").write_text(text)
    loader = RepositoryLoader(
        tree=FilesystemTree(tmp_path), self_urls=frozenset({normalize_url(SELF)})
    )
    found = [f for f in run_checks(loader.load()) if f.file == "sets/group-apps.yaml"]
    assert all(f.severity is Severity.WARNING for f in found)
    return [(f.rule, f.line, f.message) for f in found]


def test_a_gitlab_set_is_a_run_time_warning_and_gitlab_com_is_allowed(tmp_path: Path) -> None:
    findings = _findings(tmp_path, scm_api="https://gitlab.com/", pr_api="https://gitlab.com")
    assert [rule for rule, _, _ in findings] == ["HW004"]
    message = findings[0][2]
    assert "the repositories of example-group" in message or "example-group/shop" in message
    assert "not supported" not in message


def test_a_self_hosted_gitlab_api_warns_at_its_field(tmp_path: Path) -> None:
    findings = _findings(
        tmp_path,
        scm_api="https://gitlab.example.com/",
        pr_api="https://gitlab.example.com/api/v4",
    )
    forge = [(line, message) for rule, line, message in findings if rule == "HW320"]
    assert [line for line, _ in forge] == [13, 18]
    assert forge[0][1].startswith(
        "spec.generators[0].scmProvider.gitlab.api: with the default serve flags, API URL "
        "'https://gitlab.example.com/' is not allowed"
    )
    assert "the public GitLab API (https://gitlab.com/api/v4)" in forge[0][1]
    assert forge[1][1].startswith("spec.generators[1].pullRequest.gitlab.api: ")


def test_a_gitea_api_always_warns_since_none_is_allowed_by_default(tmp_path: Path) -> None:
    text = SET.format(scm_api="", pr_api="").replace(
        "        gitlab:\n          group: example-group\n          includeSubgroups: true\n",
        "        gitea:\n          owner: example-org\n          api: https://gitea.example.com/\n",
    )
    assert "gitea:" in text
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets/group-apps.yaml").write_text(text)
    loader = RepositoryLoader(
        tree=FilesystemTree(tmp_path), self_urls=frozenset({normalize_url(SELF)})
    )
    found = [f for f in run_checks(loader.load()) if f.rule == "HW320"]
    assert [f.message.split(":")[0] for f in found] == ["spec.generators[0].scmProvider.gitea.api"]
    assert "Gitea has no public API allowed by default" in found[0].message
