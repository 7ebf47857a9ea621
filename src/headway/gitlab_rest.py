"""GitLab's REST API (v4) through the project's HTTP client: requests with the token in the
`PRIVATE-TOKEN` header, pages followed by `X-Next-Page` (or a `Link: rel="next"` on the API's
own host), and errors translated into one `GitLabApiError` whose message names the call and
GitLab's reason, never the token.

Used by the ApplicationSet scmProvider and pullRequest generators
(`headway.controllers.appset.scm_gitlab`). `GiteaApi` is the same client for Gitea's v1 API,
which pages by `Link: rel="next"` and takes the token as `Authorization: token ...`
(`headway.controllers.appset.scm_gitea`).
"""

from __future__ import annotations

import re
import ssl
from typing import Any
from urllib.parse import quote, urlsplit

import httpx2

from headway.appset.forge_policy import same_origin

__all__ = [
    "MAX_PAGES",
    "GitLabApi",
    "GitLabApiError",
    "GiteaApi",
    "path_segment",
    "tls_context",
]

MAX_PAGES = 50
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class GitLabApiError(RuntimeError):
    """A call GitLab refused or that did not reach it; `status` is 0 when no answer came."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def path_segment(text: str) -> str:
    """`text` as one path segment, as GitLab's Go client escapes a project path or branch
    (`group/sub/app` as `group%2Fsub%2Fapp`, dots too)."""
    return quote(text, safe="").replace(".", "%2E")


def tls_context(insecure: bool, ca_pem: str) -> ssl.SSLContext:
    """How a forge's certificate is checked, as Argo CD's SCM clients do: the system's
    authorities plus `ca_pem`'s, or nothing with `insecure`; ValueError when `ca_pem` holds
    no readable certificate."""
    context = ssl.create_default_context()
    if ca_pem:
        try:
            context.load_verify_locations(cadata=ca_pem)
        except (ssl.SSLError, ValueError) as err:
            raise ValueError(f"no PEM certificate could be read ({err})") from None
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class GitLabApi:
    """Calls to one GitLab REST root (`https://gitlab.com/api/v4`); paths are relative."""

    FORGE = "GitLab"

    def __init__(self, *, client: httpx2.Client, token: str, api_url: str, user_agent: str) -> None:
        self.root = api_url.rstrip("/")
        self._client = client
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        if token:
            self._headers.update(self._authorization(token))

    def _authorization(self, token: str) -> dict[str, str]:
        return {"PRIVATE-TOKEN": token}

    def request(self, url: str, *, params: Any = None) -> httpx2.Response:
        """One GET of `url` (absolute, or a path under the root)."""
        absolute = url if url.startswith(("http://", "https://")) else f"{self.root}{url}"
        what = f"{self.FORGE} GET {absolute.removeprefix(self.root) or '/'}"
        try:
            response = self._client.request("GET", absolute, params=params, headers=self._headers)
        except httpx2.HTTPError as err:
            raise GitLabApiError(f"{what}: {type(err).__name__}: {err}") from None
        if response.status_code >= 400:
            raise _error_of(what, response)
        return response

    def json(self, path: str, *, params: Any = None) -> Any:
        response = self.request(path, params=params)
        try:
            return response.json()
        except ValueError:
            raise GitLabApiError(f"{self.FORGE} GET {path}: the answer is not JSON") from None

    def pages(self, path: str, params: dict[str, Any]) -> list[Any]:
        """Every item of a listed resource: the page `X-Next-Page` names, asked with the same
        query, until it is empty; a keyset `Link: rel="next"` URL when only that is given."""
        items: list[Any] = []
        url: str = path
        query: dict[str, Any] | None = dict(params)
        for _ in range(MAX_PAGES):
            response = self.request(url, params=query)
            try:
                page = response.json()
            except ValueError:
                raise GitLabApiError(f"{self.FORGE} GET {path}: the answer is not JSON") from None
            if not isinstance(page, list):
                raise GitLabApiError(f"{self.FORGE} GET {path}: expected a list")
            items.extend(page)
            following = response.headers.get("x-next-page", "").strip()
            link = _NEXT.search(response.headers.get("link", ""))
            if following:
                url, query = path, {**params, "page": following}
            elif link is not None:
                url, query = self._own(link.group(1), path), None  # the link holds the query
            else:
                return items
        raise GitLabApiError(f"{self.FORGE} GET {path}: more than {MAX_PAGES} pages")

    def _own(self, url: str, path: str) -> str:
        """A next-page URL, when it is on the root's scheme, host and port (the token goes
        only there)."""
        if not same_origin(url, self.root):
            host = urlsplit(url).hostname or "?"
            raise GitLabApiError(
                f"{self.FORGE} GET {path}: the next page is on {host}, not on the API's own host; "
                "it is not followed (the token goes only to that host)"
            )
        return url


class GiteaApi(GitLabApi):
    """Calls to one Gitea REST root (`https://gitea.example.com/api/v1`)."""

    FORGE = "Gitea"

    def _authorization(self, token: str) -> dict[str, str]:
        return {"Authorization": f"token {token}"}


def _error_of(what: str, response: httpx2.Response) -> GitLabApiError:
    """A refused call's error: GitLab's `message` (text, or field errors) or `error`."""
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    reason: Any = None
    if isinstance(payload, dict):
        reason = payload.get("message") or payload.get("error")
    if isinstance(reason, dict):
        reason = "; ".join(f"{k}: {v}" for k, v in reason.items())
    status = response.status_code
    text = f"{what}: HTTP {status}: {reason or response.reason_phrase}"
    if status == 429 and response.headers.get("retry-after"):
        text = f"{text} (rate limited; retry after {response.headers['retry-after']} s)"
    return GitLabApiError(text, status=status)
