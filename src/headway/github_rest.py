"""GitHub's REST API (version 2022-11-28) through the project's HTTP client: requests with the
documented headers, `Link: rel="next"` pagination, and errors translated into one
`GitHubApiError` whose message names the call and GitHub's reason, never the token.

Shared by the promotion forge (`headway.promotion.github`) and the ApplicationSet
pullRequest and scmProvider generators (`headway.controllers.appset.scm`, `.scm_repos`).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import httpx2

from headway.appset.forge_policy import PUBLIC_GITHUB_API, github_api_root, same_origin

__all__ = ["API_URL", "API_VERSION", "GitHubApi", "GitHubApiError", "enterprise_api_url"]

API_URL = PUBLIC_GITHUB_API
API_VERSION = "2022-11-28"
MAX_PAGES = 50
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class GitHubApiError(RuntimeError):
    """A call GitHub refused or that did not reach it; `status` is 0 when no answer came."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def enterprise_api_url(api: str) -> str:
    """The REST root of an `api` URL as Argo CD's GitHub client reads it (empty: github.com;
    GitHub Enterprise gets `/api/v3`): the one the ApplicationSet forge policy judges."""
    return github_api_root(api)


class GitHubApi:
    """Calls to one GitHub API root; paths are relative to it (`/repos/o/r/pulls`)."""

    def __init__(
        self,
        *,
        client: httpx2.Client,
        token: str = "",
        api_url: str = API_URL,
        user_agent: str = "headway",
    ) -> None:
        self.root = api_url.rstrip("/")
        self._client = client
        self._headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": user_agent,
        }
        if token:
            self._headers["Authorization"] = f"Bearer {token}"

    def request(
        self, method: str, url: str, *, body: dict[str, Any] | None = None, params: Any = None
    ) -> httpx2.Response:
        """One call to `url` (absolute, or a path under the root)."""
        absolute = url if url.startswith(("http://", "https://")) else f"{self.root}{url}"
        what = f"GitHub {method} {absolute.removeprefix(self.root) or '/'}"
        try:
            response = self._client.request(
                method, absolute, json=body, params=params, headers=self._headers
            )
        except httpx2.HTTPError as err:
            raise GitHubApiError(f"{what}: {type(err).__name__}: {err}") from None
        if response.status_code >= 400:
            raise error_of(what, response)
        return response

    def holds(self, url: str) -> bool:
        """Whether `url` goes where the root goes: the same scheme, host and port (GitHub's
        next-page links may leave the root's path, as `/repositories/{id}/...`)."""
        return same_origin(url, self.root)

    def json(self, method: str, path: str, **kw: Any) -> Any:
        response = self.request(method, path, **kw)
        try:
            return response.json()
        except ValueError:
            raise GitHubApiError(f"GitHub {method} {path}: the answer is not JSON") from None

    def pages(self, path: str, params: dict[str, Any]) -> list[Any]:
        """Every item of a listed resource, following the `Link: <...>; rel="next"` pages (the
        next page's URL carries the query itself)."""
        items: list[Any] = []
        url: str | None = path
        query: dict[str, Any] | None = params
        for _ in range(MAX_PAGES):
            if url is None:
                return items
            response = self.request("GET", url, params=query)
            try:
                page = response.json()
            except ValueError:
                raise GitHubApiError(f"GitHub GET {path}: the answer is not JSON") from None
            if not isinstance(page, list):
                raise GitHubApiError(f"GitHub GET {path}: expected a list")
            items.extend(page)
            found = _NEXT.search(response.headers.get("link", ""))
            url, query = (found.group(1), None) if found else (None, None)
            if url is not None and not self.holds(url):
                host = _host_port(url)
                raise GitHubApiError(
                    f"GitHub GET {path}: the next page is on {host}, not on the API's own "
                    "host; it is not followed (the token goes only to that host)"
                )
        raise GitHubApiError(f"GitHub GET {path}: more than {MAX_PAGES} pages")


def _host_port(url: str) -> str:
    """Where `url` points, as `host[:port]` (never its user part)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "?"
    return f"{host}:{port}" if port is not None else host


def error_of(what: str, response: httpx2.Response) -> GitHubApiError:
    """The error of a refused call: GitHub's `message` and first `errors` entry, and when the
    rate limit is spent, the epoch second it resets."""
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    reason = payload.get("message") if isinstance(payload, dict) else None
    details = payload.get("errors") if isinstance(payload, dict) else None
    if isinstance(details, list) and details:
        first = details[0]
        extra = first.get("message") if isinstance(first, dict) else str(first)
        reason = f"{reason}: {extra}" if extra else reason
    status = response.status_code
    text = f"{what}: HTTP {status}: {reason or response.reason_phrase}"
    if status in (403, 429) and response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        text = f"{text} (rate limited until epoch second {reset})"
    return GitHubApiError(text, status=status)
