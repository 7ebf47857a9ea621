"""A stateful fake Gitea (REST v1) for the scmProvider and pullRequest generators' tests: a
real local HTTP server over hand-written (unverified) data shaped as Gitea documents it.

It answers an owner's repositories, a repository's labels, branches (one or all), contents
and open pull requests, `limit` items a page (at most `page_size`) with `Link: rel="next"`
headers as Gitea sends them, and can be told to refuse (a status and Gitea's
`{"message": ...}`). It records every request: path (decoded), query and headers.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

Answer = tuple[int, dict[str, str], bytes]
HOST = "gitea.example.com"
SHOP_SHA = "7a1e0c3b5d2f4a6c8e0b1d3f5a7c9e1b3d5f7a9c"


def _repo(rid: int, name: str, default: str, *, archived: bool = False) -> dict[str, Any]:
    return {
        "id": rid,
        "name": name,
        "full_name": f"example-org/{name}",
        "owner": {"login": "example-org"},
        "default_branch": default,
        "archived": archived,
        "ssh_url": f"git@{HOST}:example-org/{name}.git",
        "clone_url": f"https://{HOST}/example-org/{name}.git",
        "html_url": f"https://{HOST}/example-org/{name}",
    }


def _branch(name: str, sha: str) -> dict[str, Any]:
    return {"name": name, "commit": {"id": sha, "message": "m"}}


def _pull(number: int, branch: str, labels: list[str], author: str) -> dict[str, Any]:
    return {
        "id": 900 + number,
        "number": number,
        "title": f"Change {number}",
        "state": "open",
        "head": {"ref": branch, "sha": f"{number:02d}" + "be" * 19},
        "base": {"ref": "main", "sha": "0" * 40},
        "user": {"login": author},
        "labels": [{"id": i, "name": n} for i, n in enumerate(labels)],
    }


def default_data() -> dict[str, Any]:
    return {
        "repos": [
            _repo(11, "shop", "main"),
            _repo(12, "billing-api", "trunk"),
            _repo(13, "legacy-portal", "master", archived=True),
        ],
        "labels": {"shop": ["team-web", "tier-1"], "billing-api": ["team-pay"]},
        "branches": {
            "shop": [_branch("main", SHOP_SHA), _branch("release/2.x", "1" * 40)],
            "billing-api": [_branch("trunk", "2" * 40), _branch("feature/Refunds_V2", "3" * 40)],
            "legacy-portal": [_branch("master", "4" * 40)],
        },
        "files": {
            "shop@main": ["deploy/kustomization.yaml"],
            "billing-api@trunk": ["deploy/values.yaml"],
            "legacy-portal@master": ["deploy/app.yaml", "DEPRECATED"],
        },
        "pulls": {
            "shop": [
                _pull(3, "feature/search", ["preview"], "alice"),
                _pull(4, "fix/Typo_Docs", [], "bob"),
                _pull(5, "feature/cart", ["preview", "ui"], "carol"),
            ]
        },
    }


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class FakeGitea:
    data: dict[str, Any] = field(default_factory=default_data)
    page_size: int = 2
    refuse: tuple[int, str] | None = None
    refuse_only: str = ""
    requests: list[Seen] = field(default_factory=list)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> Answer:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = unquote(parts.path)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append(Seen(path, parse_qs(parts.query), headers))
        if self.refuse is not None and self.refuse_only in path:
            return _json(self.refuse[0], {"message": self.refuse[1], "url": self.url})
        if path == "/api/v1/orgs/example-org/repos":
            return self._page(self.data["repos"], query, parts.path)
        prefix = "/api/v1/repos/example-org/"
        if not path.startswith(prefix):
            return _json(404, {"message": "The target couldn't be found."})
        repo, _, rest = path.removeprefix(prefix).partition("/")
        if repo not in {r["name"] for r in self.data["repos"]}:
            return _json(404, {"message": "The target couldn't be found."})
        return self._repo_route(repo, rest, query, parts.path)

    def _repo_route(self, repo: str, rest: str, query: dict[str, str], raw: str) -> Answer:
        if rest == "labels":
            labels = self.data["labels"].get(repo, [])
            return self._page([{"name": n} for n in labels], query, raw)
        branches = self.data["branches"].get(repo, [])
        if rest == "branches":
            return self._page(branches, query, raw)
        if rest.startswith("branches/"):
            named = [b for b in branches if b["name"] == rest.removeprefix("branches/")]
            return _json(200, named[0]) if named else _json(404, {"message": "branch not found"})
        if rest.startswith("contents/"):
            wanted = rest.removeprefix("contents/").rstrip("/")
            files = self.data["files"].get(f"{repo}@{query.get('ref', '')}", [])
            if wanted in files:
                return _json(200, {"type": "file", "path": wanted})
            if any(f.startswith(f"{wanted}/") for f in files):
                return _json(200, [{"type": "file", "path": f} for f in files])
            return _json(404, {"message": "object does not exist"})
        if rest == "pulls":
            pulls = [
                p for p in self.data["pulls"].get(repo, []) if p["state"] == query.get("state")
            ]
            return self._page(pulls, query, raw)
        return _json(404, {"message": "The target couldn't be found."})

    def _page(self, items: list[Any], query: dict[str, str], raw: str) -> Answer:
        page = int(query.get("page") or "1")
        size = min(int(query.get("limit") or "30") or 30, self.page_size)
        start = (page - 1) * size
        headers = {"X-Total-Count": str(len(items))}
        if start + size < len(items):
            link = f"{self.url}{raw}?{urlencode({**query, 'page': page + 1})}"
            headers["Link"] = f'<{link}>; rel="next"'
        return 200, headers, json.dumps(items[start : start + size]).encode()


def _json(status: int, body: Any) -> Answer:
    return status, {}, json.dumps(body).encode()


@contextmanager
def fake_gitea(state: FakeGitea) -> Iterator[FakeGitea]:
    """`state` served on a free local port; `state.url` is the host root (no /api/v1)."""

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
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
