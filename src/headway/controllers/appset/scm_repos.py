"""The forge calls of the scmProvider generator (GitHub), through `headway.github_rest`:

* `GET /orgs/{org}/repos` (100 a page, every page): the organization's repositories, archived
  ones included as Argo CD lists them;
* `GET /repos/{owner}/{repo}/branches/{default}`, or `GET /repos/{owner}/{repo}/branches`
  (every page) with `allBranches`: the commit of each branch; a default branch GitHub answers
  404 for is an empty repository and yields nothing, as in Argo CD;
* `GET /repos/{owner}/{repo}/contents/{path}?ref={branch}` for `pathsExist` and
  `pathsDoNotExist`: 404 means the path is absent.

Every other failure - a refused call, a timeout, an answer that is not the documented shape -
is an `InputError` naming the generator and the call, so generation stops and no Application
changes. The token is sent as a header and never appears in a message.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx2

from headway.appset.inputs import InputError, ScmQuery, ScmRepository
from headway.github_rest import GitHubApi, GitHubApiError, enterprise_api_url
from headway.json_fields import integer_field, text_field

__all__ = ["ScmGitHub"]

USER_AGENT = "headway-applicationset"
GENERATOR = "scmProvider generator"


class ScmGitHub:
    """The calls of one query, with its token and HTTP client."""

    def __init__(self, query: ScmQuery, *, token: str, client: httpx2.Client) -> None:
        self._query = query
        self._api = GitHubApi(
            client=client, token=token, api_url=enterprise_api_url(query.api), user_agent=USER_AGENT
        )

    def repositories(self) -> list[ScmRepository]:
        path = f"/orgs/{quote(self._query.organization, safe='')}/repos"
        raw = self._pages(path)
        return [self._repository(item, index, path) for index, item in enumerate(raw)]

    def branches(self, repo: ScmRepository) -> list[ScmRepository]:
        base = f"/repos/{_segment(repo.organization)}/{_segment(repo.repository)}/branches"
        if self._query.all_branches:
            raw = self._pages(base)
            return [_with_branch(repo, item, index, base) for index, item in enumerate(raw)]
        if not repo.branch:
            return []
        path = f"{base}/{_segment(repo.branch)}"
        try:
            found = self._api.json("GET", path)
        except GitHubApiError as err:
            if err.status == 404:
                return []  # no default branch yet: an empty repository
            raise InputError(f"{GENERATOR}: {err}") from None
        return [_with_branch(repo, found, 0, path)]

    def has_path(self, repo: ScmRepository, path: str) -> bool:
        where = f"/repos/{_segment(repo.organization)}/{_segment(repo.repository)}/contents"
        url = f"{where}/{quote(path, safe='/')}"
        try:
            self._api.request("GET", url, params={"ref": repo.branch})
        except GitHubApiError as err:
            if err.status == 404:
                return False
            raise InputError(f"{GENERATOR}: {err}") from None
        return True

    def _pages(self, path: str) -> list[Any]:
        try:
            return self._api.pages(path, {"per_page": 100})
        except GitHubApiError as err:
            raise InputError(f"{GENERATOR}: {err}") from None

    def _repository(self, raw: Any, index: int, path: str) -> ScmRepository:
        """One listed repository; an item without the documented fields names its index."""
        url_key = "clone_url" if self._query.clone_protocol == "https" else "ssh_url"
        try:
            topics = raw.get("topics") or []
            return ScmRepository(
                organization=text_field(raw["owner"], "login"),
                repository=text_field(raw, "name"),
                url=text_field(raw, url_key),
                branch=str(raw.get("default_branch") or ""),
                repository_id=integer_field(raw, "id"),
                labels=tuple(str(t) for t in topics),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            message = f"{GENERATOR}: GitHub GET {path}: item {index} is malformed ({err!r})"
            raise InputError(message) from None


def _with_branch(repo: ScmRepository, raw: Any, index: int, path: str) -> ScmRepository:
    try:
        name, sha = text_field(raw, "name"), text_field(raw["commit"], "sha")
    except (KeyError, TypeError, ValueError) as err:
        message = f"{GENERATOR}: GitHub GET {path}: branch {index} is malformed ({err!r})"
        raise InputError(message) from None
    return replace(repo, branch=name, sha=sha)


def _segment(text: str) -> str:
    return quote(text, safe="")
