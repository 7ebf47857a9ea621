"""The forge calls of the scmProvider and pullRequest generators for Gitea, through
`headway.gitlab_rest.GiteaApi` (the calls Argo CD's Gitea providers make, every page read):

* `GET /orgs/{owner}/repos`, and for each repository `GET /repos/{owner}/{repo}/labels`: its
  labels are the repository's issue labels, as Argo CD reads them;
* `GET /repos/{owner}/{repo}/branches/{default}` (a 404 is an error, as in Argo CD), or
  `.../branches` with `allBranches`;
* `GET /repos/{owner}/{repo}/contents/{path}?ref=`: 200 (a file or a directory) is present,
  404 absent;
* `GET /repos/{owner}/{repo}/pulls?state=open`: the pullRequest generator's pull requests.

Every other failure is an `InputError` naming the generator and the call; the token goes in
a header and never into a message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx2

from headway.appset.forge_policy import gitea_api_root
from headway.appset.inputs import (
    InputError,
    OpenPullRequest,
    PullRequestQuery,
    ScmQuery,
    ScmRepository,
)
from headway.gitlab_rest import GiteaApi, GitLabApiError, path_segment
from headway.json_fields import integer_field, text_field

__all__ = ["ScmGitea", "list_gitea_pull_requests"]

USER_AGENT = "headway-applicationset"
SCM = "scmProvider generator"
PULLS = "pullRequest generator"
PAGE = {"limit": 50}


def _api(api: str, token: str, client: httpx2.Client) -> GiteaApi:
    root = gitea_api_root(api)
    return GiteaApi(client=client, token=token, api_url=root, user_agent=USER_AGENT)


class ScmGitea:
    """The calls of one scmProvider query, with its token and HTTP client."""

    def __init__(self, query: ScmQuery, *, token: str, client: httpx2.Client) -> None:
        self._query = query
        self._api = _api(query.api, token, client)

    def repositories(self) -> list[ScmRepository]:
        owner = path_segment(self._query.organization)
        path = f"/orgs/{owner}/repos"
        raw = self._call(lambda: self._api.pages(path, PAGE))
        found = []
        for index, item in enumerate(raw):
            repo = self._repository(item, index, path)
            archived = isinstance(item, dict) and item.get("archived") is True
            if not (self._query.exclude_archived and archived):
                found.append(repo)
        return found

    def branches(self, repo: ScmRepository) -> list[ScmRepository]:
        base = f"/repos/{path_segment(self._query.organization)}/{path_segment(repo.repository)}"
        if self._query.all_branches:
            raw = self._call(lambda: self._api.pages(f"{base}/branches", PAGE))
        else:
            path = f"{base}/branches/{path_segment(repo.branch)}"
            raw = [self._call(lambda: self._api.json(path))]
        return [_with_branch(repo, item, index, base) for index, item in enumerate(raw)]

    def has_path(self, repo: ScmRepository, path: str) -> bool:
        where = f"/repos/{path_segment(repo.organization)}/{path_segment(repo.repository)}"
        url = f"{where}/contents/{quote(path, safe='/')}"
        try:
            self._api.request(url, params={"ref": repo.branch})
        except GitLabApiError as err:
            if err.status == 404:
                return False
            raise InputError(f"{SCM}: {err}") from None
        return True

    def _call(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except GitLabApiError as err:
            raise InputError(f"{SCM}: {err}") from None

    def _repository(self, raw: Any, index: int, path: str) -> ScmRepository:
        url_key = "html_url" if self._query.clone_protocol == "https" else "ssh_url"
        try:
            name = text_field(raw, "name")
            return ScmRepository(
                organization=self._query.organization,
                repository=name,
                url=text_field(raw, url_key),
                branch=str(raw.get("default_branch") or ""),
                repository_id=integer_field(raw, "id"),
                labels=tuple(self._labels(name)),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            message = f"{SCM}: Gitea GET {path}: item {index} is malformed ({err!r})"
            raise InputError(message) from None

    def _labels(self, repository: str) -> list[str]:
        owner = path_segment(self._query.organization)
        path = f"/repos/{owner}/{path_segment(repository)}/labels"
        raw = self._call(lambda: self._api.pages(path, PAGE))
        return [text_field(label, "name") for label in raw]


def list_gitea_pull_requests(
    query: PullRequestQuery, *, token: str, client: httpx2.Client
) -> list[OpenPullRequest]:
    """The repository's open pull requests (none when Gitea does not know it and the
    generator says `continueOnRepoNotFoundError`, as in Argo CD)."""
    api = _api(query.api, token, client)
    path = f"/repos/{path_segment(query.owner)}/{path_segment(query.repo)}/pulls"
    try:
        raw = api.pages(path, {"state": "open", **PAGE})
    except GitLabApiError as err:
        if err.status == 404 and query.continue_on_not_found:
            return []
        raise InputError(f"{PULLS}: {err}") from None
    return [_pull_request(item, index, path) for index, item in enumerate(raw)]


def _pull_request(raw: Any, index: int, path: str) -> OpenPullRequest:
    try:
        head, base = raw["head"], raw["base"]
        return OpenPullRequest(
            number=integer_field(raw, "number"),
            title=str(raw.get("title") or ""),
            branch=text_field(head, "ref"),
            target_branch=text_field(base, "ref"),
            head_sha=text_field(head, "sha"),
            author=text_field(raw["user"], "login"),
            labels=tuple(text_field(label, "name") for label in raw.get("labels") or []),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        message = f"{PULLS}: Gitea GET {path}: item {index} is malformed ({err!r})"
        raise InputError(message) from None


def _with_branch(repo: ScmRepository, raw: Any, index: int, path: str) -> ScmRepository:
    try:
        name, sha = text_field(raw, "name"), text_field(raw["commit"], "id")
    except (KeyError, TypeError, ValueError) as err:
        message = f"{SCM}: Gitea GET {path}/branches: branch {index} is malformed ({err!r})"
        raise InputError(message) from None
    return replace(repo, branch=name, sha=sha)


