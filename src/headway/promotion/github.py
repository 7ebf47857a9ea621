"""`Forge` over GitHub's REST API (version 2022-11-28), through `headway.github_rest`.

Endpoints used: pulls (list by head, create, merge), issues (create; list by update time, to
find an issue by the marker in its body), issue comments (list, create). A pull request is
merged with `merge_method: squash`, so the base branch gets exactly one commit whose message
is the promotion's structured message (its trailers included) and `git log` there reads as a
direct promotion would; the merge is refused by GitHub when the head is no longer the commit
Headway pushed (`sha`), which Headway reads as `ForgeConflict`.

`headway.github_rest`'s errors are translated here into `ForgeError` and its two subclasses;
the token is sent as a bearer header and never appears in a message.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import httpx2

from headway.github_rest import API_URL, GitHubApi, GitHubApiError
from headway.kubetime import format_time, parse_time
from headway.promotion.forge import (
    CLOCK_SKEW,
    Comment,
    ForgeConflict,
    ForgeError,
    ForgeNotFound,
    Issue,
    PullRequest,
    carries_marker,
)

__all__ = ["API_URL", "GitHubForge", "github_repository"]

_REPO_URL = re.compile(
    r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


def github_repository(url: str) -> tuple[str, str] | None:
    """(owner, repository) of a github.com clone URL, or None for any other remote."""
    found = _REPO_URL.match(url.strip())
    return (found.group("owner"), found.group("repo")) if found else None


def _time(value: Any) -> datetime:
    return parse_time(value) or datetime.fromtimestamp(0, UTC)


def _pull_request(raw: dict[str, Any]) -> PullRequest:
    head, base = raw.get("head") or {}, raw.get("base") or {}
    merged = bool(raw.get("merged") or raw.get("merged_at"))
    return PullRequest(
        number=int(raw["number"]),
        url=str(raw.get("html_url") or ""),
        head=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base=str(base.get("ref") or ""),
        open=raw.get("state") == "open",
        merged=merged,
        merge_commit=str(raw.get("merge_commit_sha") or "") if merged else "",
    )


def _comment(raw: dict[str, Any]) -> Comment:
    user = raw.get("user") or {}
    return Comment(
        id=int(raw["id"]),
        author=str(user.get("login") or ""),
        author_is_bot=user.get("type") == "Bot",
        body=str(raw.get("body") or ""),
        created_at=_time(raw.get("created_at")),
        updated_at=_time(raw.get("updated_at")),
        url=str(raw.get("html_url") or ""),
    )


class GitHubForge:
    """One repository on GitHub (or GitHub Enterprise, with its `api_url`)."""

    def __init__(
        self,
        *,
        owner: str,
        repository: str,
        client: httpx2.Client,
        token: str = "",
        api_url: str = API_URL,
    ) -> None:
        self._owner = owner
        self._api = GitHubApi(
            client=client,
            token=token,
            api_url=f"{api_url.rstrip('/')}/repos/{owner}/{repository}",
            user_agent="headway-promotion",
        )

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        try:
            return self._api.json(method, path, **kw)
        except GitHubApiError as err:
            raise _forge_error(err) from None

    def _pages(self, path: str, params: dict[str, Any]) -> list[Any]:
        try:
            return self._api.pages(path, params)
        except GitHubApiError as err:
            raise _forge_error(err) from None

    # -- the Forge protocol -------------------------------------------------------------------

    def find_pull_request(self, *, head: str) -> PullRequest | None:
        params = {"head": f"{self._owner}:{head}", "state": "all", "per_page": 10}
        found = self._json("GET", "/pulls", params=params)
        pulls = [_pull_request(raw) for raw in found if isinstance(raw, dict)]
        return max(pulls, key=lambda pull: pull.number, default=None)

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        request = {"head": head, "base": base, "title": title, "body": body}
        return _pull_request(self._json("POST", "/pulls", body=request))

    def merge_pull_request(self, number: int, *, head_sha: str, title: str, message: str) -> str:
        request = {
            "sha": head_sha,
            "merge_method": "squash",
            "commit_title": title,
            "commit_message": message,
        }
        answer = self._json("PUT", f"/pulls/{number}/merge", body=request)
        if not answer.get("merged") or not answer.get("sha"):
            raise ForgeConflict(f"pull request #{number} was not merged: {answer.get('message')}")
        return str(answer["sha"])

    def open_issue(self, *, title: str, body: str) -> Issue:
        answer = self._json("POST", "/issues", body={"title": title, "body": body})
        return Issue(int(answer["number"]), str(answer.get("html_url") or ""))

    def find_issue(self, *, marker: str, opened_after: datetime) -> Issue | None:
        # The list endpoint, not search: search is indexed later, so an issue created just
        # before a kill may not be found by it yet. `since` bounds the pages read.
        params = {
            "state": "all",
            "since": format_time(opened_after - CLOCK_SKEW),
            "sort": "created",
            "direction": "asc",
            "per_page": 100,
        }
        for raw in self._pages("/issues", params):
            if not isinstance(raw, dict) or "pull_request" in raw:
                continue  # the list holds pull requests too
            if carries_marker(str(raw.get("body") or ""), marker):
                return Issue(int(raw["number"]), str(raw.get("html_url") or ""))
        return None

    def comments(self, number: int) -> list[Comment]:
        raw = self._pages(f"/issues/{number}/comments", {"per_page": 100})
        return sorted((_comment(item) for item in raw), key=lambda c: (c.created_at, c.id))

    def post_comment(self, number: int, body: str) -> Comment:
        return _comment(self._json("POST", f"/issues/{number}/comments", body={"body": body}))


def _forge_error(err: GitHubApiError) -> ForgeError:
    if err.status == 404:
        return ForgeNotFound(str(err))
    if err.status in (405, 409):  # not mergeable / the head moved
        return ForgeConflict(str(err))
    return ForgeError(str(err))
