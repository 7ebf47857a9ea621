"""Real local HTTP servers the ApplicationSet's forge and plugin generators talk to in tests.

`GitHubPulls` speaks GitHub Enterprise's `GET /api/v3/repos/{owner}/{repo}/pulls` from the
(unverified, hand-written) fixture tests/appset/forge/github_pulls.json, a few items a page with
`Link: rel="next"` headers, and can be told to refuse (a status and GitHub's error body),
to answer something that is not the documented shape, or to hold an answer past the client's
timeout. It records every request's path, query and headers.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURE = Path(__file__).parent / "forge" / "github_pulls.json"


def fixture_pulls() -> list[dict[str, Any]]:
    pulls: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["pulls"]
    return pulls


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class GitHubPulls:
    owner: str = "example-org"
    repo: str = "shop"
    pulls: list[dict[str, Any]] = field(default_factory=fixture_pulls)
    page_size: int = 2
    refuse: tuple[int, str] | None = None  # (status, GitHub's message)
    raw_answer: bytes | None = None
    hold: threading.Event | None = None  # set: answer; unset: the request waits
    requests: list[Seen] = field(default_factory=list)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        self.requests.append(
            Seen(parts.path, query, {k.lower(): v for k, v in handler.headers.items()})
        )
        if self.hold is not None:
            self.hold.wait(timeout=30)
        if parts.path != f"/api/v3/repos/{self.owner}/{self.repo}/pulls":
            return 404, {}, json.dumps({"message": "Not Found"}).encode()
        if self.refuse is not None:
            status, message = self.refuse
            return status, {}, json.dumps({"message": message}).encode()
        if self.raw_answer is not None:
            return 200, {}, self.raw_answer
        return self._page(int(query.get("page", ["1"])[0]))

    def _page(self, page: int) -> tuple[int, dict[str, str], bytes]:
        start = (page - 1) * self.page_size
        items = self.pulls[start : start + self.page_size]
        headers: dict[str, str] = {}
        if start + self.page_size < len(self.pulls):
            following = f"{self.url}/repos/{self.owner}/{self.repo}/pulls"
            headers["Link"] = f'<{following}?state=open&per_page=100&page={page + 1}>; rel="next"'
        return 200, headers, json.dumps(items).encode()


@contextmanager
def github_pulls(server_state: GitHubPulls) -> Iterator[GitHubPulls]:
    """`server_state` served on a free local port; `server_state.url` is the host root."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = server_state.answer(self)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)  # fails when the client gave up (its timeout)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server_state.url = f"http://127.0.0.1:{server.server_address[1]}/api/v3"
    try:
        yield server_state
    finally:
        if server_state.hold is not None:
            server_state.hold.set()
        server.shutdown()
        server.server_close()


@dataclass
class PluginService:
    """An ApplicationSet plugin service: `POST /api/v1/getparams.execute` answers
    `{"output": {"parameters": parameters}}`, or `refuse` / `raw_answer` / `hold` as above."""

    parameters: list[dict[str, Any]] = field(default_factory=list)
    refuse: tuple[int, str] | None = None  # (status, body)
    raw_answer: bytes | None = None
    hold: threading.Event | None = None
    requests: list[tuple[Seen, Any]] = field(default_factory=list)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"null")
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append((Seen(urlsplit(handler.path).path, {}, headers), body))
        if self.hold is not None:
            self.hold.wait(timeout=30)
        if urlsplit(handler.path).path != "/api/v1/getparams.execute":
            return 404, {}, b"not found"
        if self.refuse is not None:
            return self.refuse[0], {}, self.refuse[1].encode()
        if self.raw_answer is not None:
            return 200, {}, self.raw_answer
        return 200, {}, json.dumps({"output": {"parameters": self.parameters}}).encode()


@contextmanager
def plugin_service(state: PluginService) -> Iterator[PluginService]:
    """`state` served on a free local port; `state.url` is its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            status, _, body = state.answer(self)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()


ORG_FIXTURE = Path(__file__).parent / "forge" / "github_org_repos.json"


def fixture_org() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(ORG_FIXTURE.read_text())
    return loaded


@dataclass
class GitHubOrg:
    """GitHub Enterprise's organization calls, from the (unverified, hand-written) fixture
    tests/appset/forge/github_org_repos.json: `GET /api/v3/orgs/{org}/repos` a few items a
    page with `Link: rel="next"`, `GET .../repos/{o}/{r}/branches[/{branch}]` and
    `GET .../repos/{o}/{r}/contents/{path}?ref=` (200 or 404). `refuse` answers every call
    (or those whose path holds `refuse_only`) with a status and GitHub's error body; every
    request is recorded."""

    org: str = "example-org"
    data: dict[str, Any] = field(default_factory=fixture_org)
    page_size: int = 2
    refuse: tuple[int, str] | None = None
    refuse_only: str = ""
    raw_answer: bytes | None = None
    hold: threading.Event | None = None  # set: answer; unset: the request waits
    requests: list[Seen] = field(default_factory=list)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        path = unquote(parts.path)
        self.requests.append(Seen(path, query, {k.lower(): v for k, v in handler.headers.items()}))
        if self.hold is not None:
            self.hold.wait(timeout=30)
        if self.refuse is not None and self.refuse_only in path:
            return self.refuse[0], {}, json.dumps({"message": self.refuse[1]}).encode()
        if self.raw_answer is not None:
            return 200, {}, self.raw_answer
        page = int(query.get("page", ["1"])[0])
        if path == f"/api/v3/orgs/{self.org}/repos":
            return self._page(self.data["repos"], page, parts.path)
        prefix = f"/api/v3/repos/{self.org}/"
        if not path.startswith(prefix):
            return _not_found()
        repo, _, rest = path.removeprefix(prefix).partition("/")
        if rest == "branches":
            return self._page(self.data["branches"].get(repo, []), page, parts.path)
        if rest.startswith("branches/"):
            return self._branch(repo, rest.removeprefix("branches/"))
        if rest.startswith("contents/"):
            files = self.data["files"].get(f"{repo}@{query.get('ref', [''])[0]}", [])
            found = rest.removeprefix("contents/") in files
            return (200, {}, b"{}") if found else _not_found()
        return _not_found()

    def _branch(self, repo: str, name: str) -> tuple[int, dict[str, str], bytes]:
        for branch in self.data["branches"].get(repo, []):
            if branch["name"] == name:
                return 200, {}, json.dumps(branch).encode()
        return _not_found()

    def _page(self, items: list[Any], page: int, path: str) -> tuple[int, dict[str, str], bytes]:
        start = (page - 1) * self.page_size
        headers: dict[str, str] = {}
        if start + self.page_size < len(items):
            following = f"{self.url.removesuffix('/api/v3')}{path}"
            headers["Link"] = f'<{following}?per_page=100&page={page + 1}>; rel="next"'
        return 200, headers, json.dumps(items[start : start + self.page_size]).encode()


def _not_found() -> tuple[int, dict[str, str], bytes]:
    return 404, {}, json.dumps({"message": "Not Found"}).encode()


@contextmanager
def github_org(state: GitHubOrg) -> Iterator[GitHubOrg]:
    """`state` served on a free local port; `state.url` is its `/api/v3` root."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = state.answer(self)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/api/v3"
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()
