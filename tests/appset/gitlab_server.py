"""A stateful fake GitLab (REST v4) for the scmProvider and pullRequest generators' tests: a
real local HTTP server over hand-written (unverified) data shaped as GitLab documents it.

It answers what the generators call - a group's projects (subgroups, shared projects, topic,
archived), a project by path, branches (one or all), repository files and trees, merge
requests (labels, state) - a few items a page with `X-Page`/`X-Next-Page`/`X-Total-Pages`
headers (or only a `Link: rel="next"` with `keyset`), and can be told to refuse (a status and
GitLab's `{"message": ...}`), to answer something that is not JSON, or to hold an answer. The
data can change between steps, as a forge's does. It records every request: path (decoded),
raw path, query and headers.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

Answer = tuple[int, dict[str, str], bytes]

HOST = "gitlab.example.com"
SHOP_SHA = "9f3c1b2a7d4e5f60718293a4b5c6d7e8f9012345"


def _project(
    pid: int, namespace: str, path: str, default: str | None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": pid,
        "name": path.replace("-", " ").title(),
        "path": path,
        "path_with_namespace": f"{namespace}/{path}",
        "namespace": {"id": 9000 + pid, "full_path": namespace, "kind": "group"},
        "default_branch": default,
        "ssh_url_to_repo": f"git@{HOST}:{namespace}/{path}.git",
        "http_url_to_repo": f"https://{HOST}/{namespace}/{path}.git",
        "topics": extra.pop("topics", []),
        "tag_list": extra.pop("tag_list", []),
        "archived": extra.pop("archived", False),
        **extra,
    }


def _branch(name: str, sha: str) -> dict[str, Any]:
    return {"name": name, "commit": {"id": sha, "short_id": sha[:8]}, "protected": False}


def default_data() -> dict[str, Any]:
    """The group `example-group`: shop (topics), billing-api (topics only as the old
    `tag_list`), legacy-portal (archived), scratch (empty: no default branch); subgroup
    `example-group/platform` with ingress; `other-group/shared-lib` shared with the group."""
    projects = [
        _project(101, "example-group", "shop", "main", topics=["team-web", "tier-1"]),
        _project(102, "example-group", "billing-api", "trunk", tag_list=["team-pay"]),
        _project(103, "example-group", "legacy-portal", "master", archived=True),
        _project(104, "example-group", "scratch", None),
        _project(201, "example-group/platform", "ingress", "main", topics=["infra"]),
        _project(301, "other-group", "shared-lib", "main", shared_with=["example-group"]),
    ]
    branches = {
        101: [_branch("main", SHOP_SHA), _branch("release/2.x", "1" * 40)],
        102: [_branch("feature/Refunds_V2", "abcdef01" * 5), _branch("trunk", "2" * 40)],
        103: [_branch("master", "3" * 40)],
        104: [],
        201: [_branch("main", "4" * 40)],
        301: [_branch("main", "5" * 40)],
    }
    files = {
        "101@main": ["deploy/kustomization.yaml", "README.md"],
        "101@release/2.x": ["deploy/kustomization.yaml"],
        "102@trunk": ["deploy/values.yaml"],
        "103@master": ["deploy/app.yaml", "DEPRECATED"],
        "201@main": ["charts/ingress/Chart.yaml"],
    }
    merge_requests = {
        "example-group/shop": [
            _mr(7, "Add the refunds page", "feature/refunds", "opened", ["preview"], "alice"),
            _mr(8, "Bump the base image", "renovate/base-image", "opened", [], "renovate-bot"),
            _mr(9, "Old experiment", "spike/old", "closed", ["preview"], "bob"),
            _mr(10, "Dark mode", "Feature/Dark_Mode", "opened", ["preview", "ui"], "carol"),
            _mr(11, "Release notes", "docs/notes", "merged", [], "dave"),
        ]
    }
    return {
        "projects": projects,
        "branches": branches,
        "files": files,
        "merge_requests": merge_requests,
    }


def _mr(
    iid: int, title: str, branch: str, state: str, labels: list[str], author: str
) -> dict[str, Any]:
    return {
        "id": 5000 + iid,
        "iid": iid,
        "project_id": 101,
        "title": title,
        "state": state,
        "source_branch": branch,
        "target_branch": "main",
        "sha": f"{iid:02d}" + "c0ffee" * 6 + "ab",
        "labels": labels,
        "author": {"id": iid, "username": author, "name": author.title()},
    }


@dataclass
class Seen:
    path: str
    raw_path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class FakeGitLab:
    data: dict[str, Any] = field(default_factory=default_data)
    page_size: int = 2
    keyset: bool = False  # pages announced only by `Link: rel="next"`
    total_pages: bool = True  # False: no X-Total-Pages (GitLab past 10,000 items)
    refuse: tuple[int, str] | None = None  # (status, GitLab's message) for every call ...
    refuse_only: str = ""  # ... or only those whose path holds this
    raw_answer: bytes | None = None
    hold: threading.Event | None = None
    requests: list[Seen] = field(default_factory=list)
    url: str = ""  # the host root; the API is under /api/v4

    def answer(self, handler: BaseHTTPRequestHandler) -> Answer:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        segments = [unquote(s) for s in parts.path.split("/")]
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append(Seen("/".join(segments), parts.path, query, headers))
        if self.hold is not None:
            self.hold.wait(timeout=30)
        if self.refuse is not None and self.refuse_only in "/".join(segments):
            return _json(self.refuse[0], {"message": self.refuse[1]})
        if self.raw_answer is not None:
            return 200, {}, self.raw_answer
        if segments[:3] != ["", "api", "v4"]:
            return _json(404, {"message": "404 Not Found"})
        return self._route(segments[3:], query, parts.path)

    def _route(self, route: list[str], query: dict[str, list[str]], path: str) -> Answer:
        first = {k: v[0] for k, v in query.items()}
        if len(route) == 3 and route[0] == "groups" and route[2] == "projects":
            return self._group_projects(route[1], first, path)
        if len(route) >= 2 and route[0] == "projects":
            project = self._project(route[1])
            if project is None:
                return _json(404, {"message": "404 Project Not Found"})
            return self._project_route(project, route[2:], first, path)
        return _json(404, {"message": "404 Not Found"})

    def _project(self, key: str) -> dict[str, Any] | None:
        for project in self.data["projects"]:
            if key in (str(project["id"]), project["path_with_namespace"]):
                return dict(project)
        return None

    def _group_projects(self, group: str, query: dict[str, str], path: str) -> Answer:
        known = {p["namespace"]["full_path"] for p in self.data["projects"]}
        if group not in known:
            return _json(404, {"message": "404 Group Not Found"})
        subgroups = query.get("include_subgroups") == "true"
        shared = query.get("with_shared", "true") == "true"
        found = []
        for project in self.data["projects"]:
            namespace = project["namespace"]["full_path"]
            own = namespace == group or (subgroups and namespace.startswith(f"{group}/"))
            if not own and not (shared and group in project.get("shared_with", [])):
                continue
            if query.get("topic") and query["topic"] not in project["topics"]:
                continue
            if "archived" in query and project["archived"] != (query["archived"] == "true"):
                continue
            found.append(project)
        return self._page(found, query, path)

    def _project_route(
        self, project: dict[str, Any], rest: list[str], query: dict[str, str], path: str
    ) -> Answer:
        pid = project["id"]
        if not rest:
            return _json(200, project)
        if rest == ["merge_requests"]:
            return self._merge_requests(project, query, path)
        if rest[:2] == ["repository", "branches"]:
            branches = self.data["branches"].get(pid, [])
            if len(rest) == 2:
                return self._page(branches, query, path)
            named = [b for b in branches if b["name"] == "/".join(rest[2:])]
            return (
                _json(200, named[0]) if named else _json(404, {"message": "404 Branch Not Found"})
            )
        files = self.data["files"].get(f"{pid}@{query.get('ref', '')}", [])
        if rest[:2] == ["repository", "files"] and len(rest) == 3:
            if rest[2] in files:
                return _json(200, {"file_path": rest[2], "ref": query.get("ref")})
            return _json(404, {"message": "404 File Not Found"})
        if rest == ["repository", "tree"]:
            prefix = query.get("path", "").rstrip("/") + "/"
            if any(f.startswith(prefix) for f in files):
                return self._page([{"path": prefix}], query, path)
            return _json(404, {"message": "404 Tree Not Found"})
        return _json(404, {"message": "404 Not Found"})

    def _merge_requests(self, project: dict[str, Any], query: dict[str, str], path: str) -> Answer:
        listed = self.data["merge_requests"].get(project["path_with_namespace"], [])
        wanted = [x for x in query.get("labels", "").split(",") if x]
        state = query.get("state", "all")
        found = [
            mr
            for mr in listed
            if set(wanted) <= set(mr["labels"]) and state in ("all", mr["state"])
        ]
        return self._page(found, query, path)

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> Answer:
        page = int(query.get("page") or "1")
        total = max(1, -(-len(items) // self.page_size))
        start = (page - 1) * self.page_size
        headers = {"X-Page": str(page), "X-Per-Page": str(self.page_size)}
        following = page + 1 if page < total else None
        if self.keyset:
            if following is not None:
                link = f"{self.url}{path}?{urlencode({**query, 'page': following})}"
                headers["Link"] = f'<{link}>; rel="next"'
        else:
            headers["X-Next-Page"] = str(following or "")
            if self.total_pages:
                headers["X-Total-Pages"] = str(total)
        return 200, headers, json.dumps(items[start : start + self.page_size]).encode()


def _json(status: int, body: Any) -> Answer:
    return status, {}, json.dumps(body).encode()


@contextmanager
def fake_gitlab(state: FakeGitLab, *, tls: ssl.SSLContext | None = None) -> Iterator[FakeGitLab]:
    """`state` served on a free local port (over HTTPS with `tls`); `state.url` is the host
    root (no /api/v4)."""

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
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()
