"""A stateful fake of GitHub's issue endpoints, served through httpx2's mock transport to the
real `GitHubForge` (its requests, pages and errors are the ones it sends to GitHub).

It keeps issues and comments, answers `POST /issues`, the issue list (`state`, `since`,
`sort=created`, `direction`, `per_page` with `Link: rel="next"` pages, pull requests
included, as GitHub lists them) and the comment endpoints. `after_create` lets a test act
right after GitHub has created an issue and before its answer reaches Headway: raise there
and the caller never learns the number, as when the controller is killed at that moment.
Timestamps come from the test's clock (`now`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2

from headway.kubetime import format_time, parse_time
from headway.promotion.github import GitHubForge

OWNER, REPO = "example-org", "infra"
_BASE = f"/repos/{OWNER}/{REPO}"


@dataclass
class FakeGitHubIssues:
    now: Callable[[], datetime]
    page_size: int = 2
    issues: list[dict[str, Any]] = field(default_factory=list)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    after_create: Callable[[dict[str, Any]], None] | None = None
    down: bool = False  # every request answered 502 Bad Gateway
    requests: list[tuple[str, str]] = field(default_factory=list)

    def forge(self) -> GitHubForge:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        return GitHubForge(owner=OWNER, repository=REPO, client=client, token="t0ken")

    @property
    def opened(self) -> list[dict[str, Any]]:
        """The issues Headway opened (not the pull requests listed alongside)."""
        return [i for i in self.issues if "pull_request" not in i]

    def add_pull_request(self, title: str) -> None:
        """A pull request, which GitHub's issue list includes (with a `pull_request` key)."""
        issue = self._new(title, "", by="dev")
        issue["pull_request"] = {"url": f"https://api.github.com{_BASE}/pulls/{issue['number']}"}

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        self.requests.append((request.method, path))
        if self.down:
            return _json(502, {"message": "Bad Gateway"})
        body = json.loads(request.content) if request.content else {}
        if request.method == "POST" and path == f"{_BASE}/issues":
            issue = self._new(str(body["title"]), str(body.get("body") or ""), by="headway[bot]")
            if self.after_create is not None:
                self.after_create(issue)
            return _json(201, issue)
        if request.method == "GET" and path == f"{_BASE}/issues":
            return self._list(request)
        number = int(path.split("/")[-2]) if path.endswith("/comments") else 0
        if number and request.method == "GET":
            return _json(200, self.comments.get(number, []))
        if number and request.method == "POST":
            return _json(201, self._comment(number, str(body["body"])))
        return _json(404, {"message": "Not Found"})

    def _new(self, title: str, body: str, *, by: str) -> dict[str, Any]:
        number = len(self.issues) + 1
        stamp = format_time(self.now())
        issue = {
            "number": number,
            "html_url": f"https://github.com/{OWNER}/{REPO}/issues/{number}",
            "title": title,
            "body": body,
            "state": "open",
            "user": {"login": by, "type": "Bot" if by.endswith("[bot]") else "User"},
            "created_at": stamp,
            "updated_at": stamp,
        }
        self.issues.append(issue)
        return issue

    def comment(self, number: int, author: str, body: str) -> None:
        """A person's comment on issue `number`."""
        self._comment(number, body, by=author)

    def _comment(self, number: int, body: str, *, by: str = "headway[bot]") -> dict[str, Any]:
        said = self.comments.setdefault(number, [])
        stamp = format_time(self.now())
        comment = {
            "id": 1000 + sum(len(c) for c in self.comments.values()),
            "body": body,
            "user": {"login": by, "type": "Bot" if by.endswith("[bot]") else "User"},
            "created_at": stamp,
            "updated_at": stamp,
            "html_url": f"https://github.com/{OWNER}/{REPO}/issues/{number}#c",
        }
        said.append(comment)
        return comment

    def _list(self, request: httpx2.Request) -> httpx2.Response:
        query = {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}
        assert query.get("state") == "all" and query.get("sort") == "created", query
        since = parse_time(query["since"]) if "since" in query else None
        listed = [i for i in self.issues if since is None or parse_time(i["updated_at"]) >= since]
        if query.get("direction") != "asc":
            listed.reverse()
        size = min(self.page_size, int(query.get("per_page", "30")))
        page = int(query.get("page", "1"))
        items = listed[(page - 1) * size : page * size]
        headers = {"content-type": "application/json"}
        if page * size < len(listed):
            following = dict(query, page=str(page + 1))
            link = httpx2.URL(str(request.url)).copy_with(params=following)
            headers["link"] = f'<{link}>; rel="next"'
        return httpx2.Response(200, headers=headers, content=json.dumps(items).encode())


def _json(status: int, body: Any) -> httpx2.Response:
    return httpx2.Response(
        status, headers={"content-type": "application/json"}, content=json.dumps(body).encode()
    )
