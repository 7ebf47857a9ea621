"""The scmProvider generator's pure half (GitHub, GitLab): its spec read into a `ScmQuery` and
`ScmFilter`s, the repositories chosen through the `Inputs` calls, and each chosen branch
turned into Argo CD's parameters (applicationset/generators/scm_provider.go).

A filter passes a repository branch when every condition it gives holds; the filters of a
list OR each other, and no filter passes everything. Repository conditions (`repositoryMatch`,
`labelMatch`) are decided before the branches are read, so a repository no filter can pass
costs no branch or path call.

Parameters: organization, repository, repository_id, url, branch, branchNormalized, sha,
short_sha (8 characters), short_sha_7, labels (the topics joined by commas), the same names
with goTemplate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.appset.inputs import ForgeTls, Inputs, ScmQuery, ScmRepository
from headway.appset.paths import sanitize_name
from headway.appset.pull_requests import SpecError, flag, forge_tls, secret_ref

__all__ = ["ScmFilter", "chosen_branches", "filters_of", "params_of", "query_of"]

OTHER_PROVIDERS = (
    "bitbucketServer",
    "bitbucket",
    "azureDevOps",
    "awsCodeCommit",
)
CLONE_PROTOCOLS = ("", "ssh", "https")


@dataclass(frozen=True)
class ScmFilter:
    """One `filters` entry: the conditions it gives, each None (or empty) when absent."""

    repository: re.Pattern[str] | None = None
    label: re.Pattern[str] | None = None
    branch: re.Pattern[str] | None = None
    paths_exist: tuple[str, ...] = ()
    paths_do_not_exist: tuple[str, ...] = ()

    @property
    def has_repository_conditions(self) -> bool:
        return self.repository is not None or self.label is not None

    @property
    def has_branch_conditions(self) -> bool:
        return self.branch is not None or bool(self.paths_exist or self.paths_do_not_exist)

    def passes_repository(self, repo: ScmRepository) -> bool:
        if self.repository is not None and not self.repository.search(repo.repository):
            return False
        return self.label is None or any(self.label.search(x) for x in repo.labels)

    def passes_branch(self, inputs: Inputs, query: ScmQuery, repo: ScmRepository) -> bool:
        """The branch conditions; path calls are made only when the branch name passes."""
        if self.branch is not None and not self.branch.search(repo.branch):
            return False
        for path in self.paths_exist:
            if not inputs.scm_has_path(query, repo, path):
                return False
        return not any(inputs.scm_has_path(query, repo, p) for p in self.paths_do_not_exist)


def query_of(spec: Mapping[str, Any]) -> ScmQuery:
    """The GitHub organization or GitLab group an scmProvider spec lists, and how."""
    other = next((p for p in OTHER_PROVIDERS if p in spec), None)
    if other is not None:
        message = f"the {other} provider is not supported by Headway; use github, gitlab or gitea"
        raise SpecError((other,), message)
    if "gitlab" in spec and "github" not in spec:
        return _gitlab_query(spec)
    if "gitea" in spec and "github" not in spec:
        return _gitea_query(spec)
    github = spec.get("github")
    if not isinstance(github, Mapping):
        message = "an scmProvider generator needs a github, gitlab or gitea provider"
        raise SpecError(("github",), message)
    if github.get("appSecretName"):
        raise SpecError(
            ("github", "appSecretName"), "GitHub App authentication is not supported; use tokenRef"
        )
    organization = github.get("organization")
    if not isinstance(organization, str) or not organization:
        raise SpecError(("github", "organization"), "organization is required")
    protocol = spec.get("cloneProtocol") or ""
    if protocol not in CLONE_PROTOCOLS:
        raise SpecError(
            ("cloneProtocol",), f"unknown clone protocol for GitHub {protocol!r} (ssh or https)"
        )
    all_branches = github.get("allBranches", False)
    if not isinstance(all_branches, bool):
        raise SpecError(("github", "allBranches"), "allBranches must be true or false")
    return ScmQuery(
        organization=organization,
        api=str(github.get("api") or ""),
        token_ref=secret_ref(github.get("tokenRef"), ("github", "tokenRef")),
        all_branches=all_branches,
        clone_protocol=protocol or "ssh",
    )


def _gitlab_query(spec: Mapping[str, Any]) -> ScmQuery:
    """A GitLab group's projects: `includeSharedProjects` is true unless set false, the other
    switches false unless set (Argo CD's defaults)."""
    gitlab = spec["gitlab"]
    if not isinstance(gitlab, Mapping):
        raise SpecError(("gitlab",), "gitlab must be a mapping")
    group = gitlab.get("group")
    if not isinstance(group, str | int) or isinstance(group, bool) or group == "":
        raise SpecError(("gitlab", "group"), "group is required (its id or full path)")
    protocol = spec.get("cloneProtocol") or ""
    if protocol not in CLONE_PROTOCOLS:
        raise SpecError(
            ("cloneProtocol",), f"unknown clone protocol for Gitlab {protocol!r} (ssh or https)"
        )
    topic = gitlab.get("topic") or ""
    if not isinstance(topic, str):
        raise SpecError(("gitlab", "topic"), "topic must be a string")
    switches = {
        key: flag(gitlab, key, ("gitlab", key))
        for key in ("allBranches", "includeSubgroups", "includeArchivedRepos")
    }
    shared = gitlab.get("includeSharedProjects")
    return ScmQuery(
        provider="gitlab",
        organization=str(group),
        api=str(gitlab.get("api") or ""),
        token_ref=secret_ref(gitlab.get("tokenRef"), ("gitlab", "tokenRef")),
        all_branches=switches["allBranches"],
        clone_protocol=protocol or "ssh",
        include_subgroups=switches["includeSubgroups"],
        include_shared=True if shared is None else flag(
            gitlab, "includeSharedProjects", ("gitlab", "includeSharedProjects")
        ),
        include_archived=switches["includeArchivedRepos"],
        topic=topic,
        tls=forge_tls(gitlab, "gitlab"),
    )


def _gitea_query(spec: Mapping[str, Any]) -> ScmQuery:
    """A Gitea owner's repositories; `api` is required (Gitea has no public API)."""
    gitea = spec["gitea"]
    if not isinstance(gitea, Mapping):
        raise SpecError(("gitea",), "gitea must be a mapping")
    for key in ("owner", "api"):
        if not isinstance(gitea.get(key), str) or not gitea[key]:
            raise SpecError(("gitea", key), f"{key} is required")
    protocol = spec.get("cloneProtocol") or ""
    if protocol not in CLONE_PROTOCOLS:
        raise SpecError(
            ("cloneProtocol",), f"unknown clone protocol for Gitea {protocol!r} (ssh or https)"
        )
    return ScmQuery(
        provider="gitea",
        organization=gitea["owner"],
        api=gitea["api"],
        token_ref=secret_ref(gitea.get("tokenRef"), ("gitea", "tokenRef")),
        all_branches=flag(gitea, "allBranches", ("gitea", "allBranches")),
        clone_protocol=protocol or "ssh",
        exclude_archived=flag(gitea, "excludeArchivedRepos", ("gitea", "excludeArchivedRepos")),
        tls=ForgeTls(insecure=flag(gitea, "insecure", ("gitea", "insecure"))),
    )


def filters_of(spec: Mapping[str, Any]) -> list[ScmFilter]:
    raw = spec.get("filters") or []
    if not isinstance(raw, list):
        raise SpecError(("filters",), "filters must be a list")
    return [_filter(entry, index) for index, entry in enumerate(raw)]


def _filter(entry: Any, index: int) -> ScmFilter:
    if not isinstance(entry, Mapping):
        raise SpecError(("filters", index), "a filter must be a mapping")
    patterns: dict[str, re.Pattern[str] | None] = {}
    for key in ("repositoryMatch", "labelMatch", "branchMatch"):
        text = entry.get(key)
        try:
            patterns[key] = None if text is None else re.compile(str(text))
        except re.error as err:
            raise SpecError(("filters", index, key), f"not a regular expression: {err}") from None
    paths: dict[str, tuple[str, ...]] = {}
    for key in ("pathsExist", "pathsDoNotExist"):
        listed = entry.get(key) or []
        if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
            raise SpecError(("filters", index, key), f"{key} must be a list of paths")
        paths[key] = tuple(p.rstrip("/") for p in listed)
    return ScmFilter(
        repository=patterns["repositoryMatch"],
        label=patterns["labelMatch"],
        branch=patterns["branchMatch"],
        paths_exist=paths["pathsExist"],
        paths_do_not_exist=paths["pathsDoNotExist"],
    )


def chosen_branches(
    inputs: Inputs, query: ScmQuery, filters: Sequence[ScmFilter]
) -> list[ScmRepository]:
    """The repository branches Argo CD's two passes choose, in the forge's order.

    First the repositories: those some filter with a repository condition passes (all of them
    when no filter has one). Then their branches: those some filter with a branch condition
    passes (all of them when none has one). Each pass reads only its own kind of condition,
    so `[{repositoryMatch: a}, {branchMatch: main}]` keeps only `main` of `a*`, and a filter
    without conditions counts in neither. This is what Argo CD's code does (its documentation
    reads each filter whole); a set moved from Argo CD must make the same Applications, since
    one fewer would delete a running app. A repository no pass keeps costs no branch call."""
    by_repository = [f for f in filters if f.has_repository_conditions]
    by_branch = [f for f in filters if f.has_branch_conditions]
    chosen: list[ScmRepository] = []
    for repo in inputs.scm_repositories(query):
        if by_repository and not any(f.passes_repository(repo) for f in by_repository):
            continue
        for branch in inputs.scm_branches(query, repo):
            if not by_branch or any(f.passes_branch(inputs, query, branch) for f in by_branch):
                chosen.append(branch)
    return chosen


def params_of(repo: ScmRepository) -> dict[str, Any]:
    """Argo CD's parameters of one repository branch (the same in both template modes)."""
    return {
        "organization": repo.organization,
        "repository": repo.repository,
        "repository_id": repo.repository_id,
        "url": repo.url,
        "branch": repo.branch,
        "branchNormalized": sanitize_name(repo.branch),
        "sha": repo.sha,
        "short_sha": repo.sha[:8],
        "short_sha_7": repo.sha[:7],
        "labels": ",".join(repo.labels),
    }
