"""The dashboard's web application: pages, live updates, login and the actions' guard.

Pages are rendered on the server (Jinja2) from the same reads the CLI makes; a page region
that can change names its topics (`data-topics`) and is fetched again, as a fragment, when
the event stream (`/events`, fed by the store's watch through `live.Hub`) announces one of
them. Actions (POST) need a session opened with the dashboard token and the session's CSRF
token in the `X-CSRF-Token` header; see docs/dashboard.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.dashboard.access import Sessions, TokenCheck
from headway.dashboard.live import CLOSED, Hub
from headway.dashboard.traffic import TrafficObserver

__all__ = ["COOKIE", "CSRF_HEADER", "Dashboard", "create_app"]

log = logging.getLogger(__name__)
HERE = Path(__file__).parent
COOKIE = "headway_session"
CSRF_HEADER = "X-CSRF-Token"
_KEEPALIVE_SECONDS = 15.0  # a comment line so proxies do not close an idle stream


@dataclass
class Dashboard:
    """What the routes need: the cluster to read and steer, and the guard's state."""

    cluster: Cluster
    state_dir: Path
    clock: Clock
    token: TokenCheck
    sessions: Sessions
    hub: Hub | None = None  # None: pages render but nothing streams (set when serving)
    commit_message: Any = None  # (repo URL, revision) -> str | None, when Git is at hand
    traffic: TrafficObserver | None = None  # the router's own counts, where it has them


templates = Jinja2Templates(directory=str(HERE / "templates"))


def dashboard_of(request: Request) -> Dashboard:
    found: Dashboard = request.app.state.dashboard
    return found


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    """A page or fragment, with what every template needs: the CSRF token when logged in."""
    sessions, session = dashboard_of(request).sessions, request.cookies.get(COOKIE)
    csrf = sessions.csrf_of(session)
    context = {"request": request, "csrf": csrf, "logged_in": csrf is not None,
               "identity": sessions.identity_of(session), **context}
    return templates.TemplateResponse(request, template, context, status_code=status_code)


def flash(message: str, *, ok: bool, status_code: int = 200) -> HTMLResponse:
    """The answer to an action: one line, shown where the page keeps them."""
    from html import escape

    kind = "ok" if ok else "error"
    body = f'<div class="flash {kind}" role="status">{escape(message)}</div>'
    return HTMLResponse(body, status_code=status_code)


def unreadable(request: Request, what: str, err: Exception, *, fragment: bool) -> Response:
    """An object whose fields have shapes the page cannot show: one sentence naming it and
    the problem, never a traceback (the log keeps the details)."""
    log.warning("dashboard: cannot show %s", what, exc_info=err)
    message = f"cannot show {what}: a field has an unexpected shape ({type(err).__name__}: {err})"
    if fragment:
        return flash(message, ok=False)
    return render(request, "missing.html", status_code=200, what=what, problem=message)


def _same_origin(request: Request) -> bool:
    """A browser names the page that sent a POST in `Origin`; it must be this server."""
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not a browser's cross-site form (those always send Origin)
    return urlsplit(origin).netloc == request.headers.get("host")


def refusal(request: Request) -> Response | None:
    """Why this action request may not act, or None when it may."""
    board = dashboard_of(request)
    if not _same_origin(request):
        return flash("refused: the request came from another site", ok=False, status_code=403)
    session = request.cookies.get(COOKIE)
    if board.sessions.csrf_of(session) is None:
        return flash(
            "read-only: log in with the dashboard token to act", ok=False, status_code=401
        )
    if not board.sessions.allows(session, request.headers.get(CSRF_HEADER)):
        return flash("refused: missing or wrong CSRF token", ok=False, status_code=403)
    return None


async def form_of(request: Request) -> dict[str, str]:
    """A form posted URL-encoded (what browsers and htmx send); the first value of each
    field. (Starlette's own parser needs python-multipart, which nothing else here needs.)"""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


async def login(request: Request) -> Response:
    board = dashboard_of(request)
    form = await form_of(request)
    token = str(form.get("token") or "")
    back = str(form.get("next") or "/")
    back = back if back.startswith("/") and not back.startswith("//") else "/"
    if not _same_origin(request) or not board.token.accepts(token):
        return render(request, "login.html", status_code=401, error="wrong token", next=back)
    session, _csrf = board.sessions.open(str(form.get("name") or ""))
    response = RedirectResponse(back, status_code=303)
    response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path="/")
    return response


async def login_page(request: Request) -> Response:
    return render(request, "login.html", error="", next=request.query_params.get("next", "/"))


async def logout(request: Request) -> Response:
    if not _same_origin(request):
        return flash("refused: the request came from another site", ok=False, status_code=403)
    dashboard_of(request).sessions.close(request.cookies.get(COOKIE))
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def _event(topics: set[str]) -> str:
    return f"event: changed\ndata: {json.dumps(sorted(topics))}\n\n"


async def _changes(hub: Hub) -> AsyncIterator[str]:
    queue = hub.subscribe()
    try:
        yield "retry: 2000\n: connected\n\n"
        while True:
            try:
                batch = await asyncio.wait_for(queue.get(), timeout=_KEEPALIVE_SECONDS)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            if batch is CLOSED:
                return
            topics = set(batch)
            while not queue.empty():  # what piled up meanwhile goes out as one event
                more = queue.get_nowait()
                if more is CLOSED:
                    return
                topics |= more
            yield _event(topics)
    finally:
        hub.unsubscribe(queue)


async def events(request: Request) -> Response:
    hub = dashboard_of(request).hub
    if hub is None:
        return Response("no live updates in this server\n", status_code=503)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(_changes(hub), media_type="text/event-stream", headers=headers)


async def home(_request: Request) -> Response:
    return RedirectResponse("/applications", status_code=307)


def create_app(board: Dashboard) -> Starlette:
    from headway.dashboard import routes_apps, routes_promotions, routes_rollouts

    routes = [
        Route("/", home),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/events", events),
        *routes_apps.ROUTES,
        *routes_rollouts.ROUTES,
        *routes_promotions.ROUTES,
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.dashboard = board
    return app


def path_params(request: Request) -> Mapping[str, str]:
    return {k: str(v) for k, v in request.path_params.items()}
