"""The forge calls of the scmProvider and pullRequest generators for GitLab, through
`headway.gitlab_rest` (the calls Argo CD's GitLab providers make):

* `GET /groups/{group}/projects` (100 a page, every page) with `include_subgroups`,
  `with_shared`, `topic` (when given) and `archived=true` with `includeArchivedRepos`;
* `GET /projects/{id}/repository/branches/{default}`, or `.../branches` (every page) with
  `allBranches`: a 404 is a project without that branch (or empty) and yields nothing;
* for `pathsExist` / `pathsDoNotExist`: `GET /projects/{org/repo}` for the project's id, then
  `GET /projects/{id}/repository/files/{path}?ref=`, and on 404 the directory listing
  `GET /projects/{id}/repository/tree?path=&ref=`; 404 on both means the path is absent;
* `GET /projects/{project}/merge_requests` (100 a page, every page) with `labels` and `state`
  when given: the pullRequest generator's merge requests.

Every other failure - a refused call, a timeout, an answer that is not the documented shape -
is an `InputError` naming the generator and the call, so generation stops and no Application
changes. The token goes in a header and never into a message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx2

from headway.appset.forge_policy import gitlab_api_root
from headway.appset.inputs import (
    InputError,
    OpenPullRequest,
    PullRequestQuery,
    ScmQuery,
    ScmRepository,
)
from headway.gitlab_rest import GitLabApi, GitLabApiError, path_segment
from headway.json_fields import integer_field, text_field

__all__ = ["ScmGitLab", "list_merge_requests"]

USER_AGENT = "headway-applicationset"
SCM = "scmProvider generator"
PULLS = "pullRequest generator"


class ScmGitLab:
    """The calls of one scmProvider query, with its token and HTTP client."""

    def __init__(self, query: ScmQuery, *, token: str, client: httpx2.Client) -> None:
        self._query = query
        self._api = GitLabApi(
            client=client, token=token, api_url=gitlab_api_root(query.api), user_agent=USER_AGENT
        )
        self._project_ids: dict[str, int] = {}

    def repositories(self) -> list[ScmRepository]:
        query = self._query
        path = f"/groups/{path_segment(query.organization)}/projects"
        params: dict[str, Any] = {
            "per_page": 100,
            "include_subgroups": _boolean(query.include_subgroups),
            "with_shared": _boolean(query.include_shared),
        }
        if query.topic:
            params["topic"] = query.topic
        if query.include_archived:
            params["archived"] = "true"
        raw = self._call(lambda: self._api.pages(path, params))
        return [self._repository(item, index, path) for index, item in enumerate(raw)]

    def branches(self, repo: ScmRepository) -> list[ScmRepository]:
        base = f"/projects/{repo.repository_id}/repository/branches"
        if self._query.all_branches:
            listed = self._absent_as_none(lambda: self._api.pages(base, {"per_page": 100}))
            found = listed or []
        elif not repo.branch:
            found = []  # no default branch: an empty project
        else:
            path = f"{base}/{path_segment(repo.branch)}"
            one = self._absent_as_none(lambda: self._api.json(path))
            found = [] if one is None else [one]
        return [_with_branch(repo, item, index, base) for index, item in enumerate(found)]

    def has_path(self, repo: ScmRepository, path: str) -> bool:
        project = self._project_id(repo)
        where = f"/projects/{project}/repository"
        branch = {"ref": repo.branch}
        file_url = f"{where}/files/{path_segment(path)}"
        if self._absent_as_none(lambda: self._api.request(file_url, params=branch)) is not None:
            return True
        tree_url, tree = f"{where}/tree", {"path": path, **branch}
        return self._absent_as_none(lambda: self._api.request(tree_url, params=tree)) is not None

    def _project_id(self, repo: ScmRepository) -> int:
        """The project's id, asked by its path as Argo CD does (cached per step)."""
        full = f"{repo.organization}/{repo.repository}"
        if full not in self._project_ids:
            path = f"/projects/{path_segment(full)}"
            found = self._call(lambda: self._api.json(path))
            try:
                self._project_ids[full] = integer_field(found, "id")
            except (KeyError, TypeError, ValueError) as err:
                raise InputError(f"{SCM}: GitLab GET {path}: malformed ({err!r})") from None
        return self._project_ids[full]

    def _call(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except GitLabApiError as err:
            raise InputError(f"{SCM}: {err}") from None

    def _absent_as_none(self, call: Callable[[], Any]) -> Any:
        """The call's answer, None when GitLab answers 404."""
        try:
            return call()
        except GitLabApiError as err:
            if err.status == 404:
                return None
            raise InputError(f"{SCM}: {err}") from None

    def _repository(self, raw: Any, index: int, path: str) -> ScmRepository:
        """One listed project; topics, or the older `tag_list` when it has none (GitLab
        before 14.5), are its labels."""
        url_key = "http_url_to_repo" if self._query.clone_protocol == "https" else "ssh_url_to_repo"
        try:
            labels = raw.get("topics") or raw.get("tag_list") or []
            return ScmRepository(
                organization=text_field(raw["namespace"], "full_path"),
                repository=text_field(raw, "path"),
                url=text_field(raw, url_key),
                branch=str(raw.get("default_branch") or ""),
                repository_id=integer_field(raw, "id"),
                labels=tuple(str(t) for t in labels),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            message = f"{SCM}: GitLab GET {path}: item {index} is malformed ({err!r})"
            raise InputError(message) from None


def list_merge_requests(
    query: PullRequestQuery, *, token: str, client: httpx2.Client
) -> list[OpenPullRequest]:
    """The project's merge requests (none when GitLab does not know the project and the
    generator says `continueOnRepoNotFoundError`, as in Argo CD)."""
    api = GitLabApi(
        client=client, token=token, api_url=gitlab_api_root(query.api), user_agent=USER_AGENT
    )
    path = f"/projects/{path_segment(query.project)}/merge_requests"
    params: dict[str, Any] = {"per_page": 100}
    if query.labels:
        params["labels"] = ",".join(query.labels)
    if query.state:
        params["state"] = query.state
    try:
        raw = api.pages(path, params)
    except GitLabApiError as err:
        if err.status == 404 and query.continue_on_not_found:
            return []
        raise InputError(f"{PULLS}: {err}") from None
    return [_merge_request(item, index, path) for index, item in enumerate(raw)]


def _merge_request(raw: Any, index: int, path: str) -> OpenPullRequest:
    """One merge request; `sha` may be null on GitLab (then empty, as in Argo CD)."""
    try:
        sha = raw.get("sha")
        return OpenPullRequest(
            number=integer_field(raw, "iid"),
            title=str(raw.get("title") or ""),
            branch=text_field(raw, "source_branch"),
            target_branch=text_field(raw, "target_branch"),
            head_sha=sha if isinstance(sha, str) else "",
            author=text_field(raw["author"], "username"),
            labels=tuple(str(label) for label in raw.get("labels") or []),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        message = f"{PULLS}: GitLab GET {path}: item {index} is malformed ({err!r})"
        raise InputError(message) from None


def _with_branch(repo: ScmRepository, raw: Any, index: int, path: str) -> ScmRepository:
    try:
        name, sha = text_field(raw, "name"), text_field(raw["commit"], "id")
    except (KeyError, TypeError, ValueError) as err:
        message = f"{SCM}: GitLab GET {path}: branch {index} is malformed ({err!r})"
        raise InputError(message) from None
    return replace(repo, branch=name, sha=sha)


def _boolean(value: bool) -> str:
    return "true" if value else "false"


