"""The Applications pages and their actions (sync, refresh, terminate, rollback), through
`headway.steering.apps`, as `headway app` does them."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from headway.cluster.errors import ClusterError, NotFound
from headway.controllers.app.names import APP_API_VERSION
from headway.dashboard import app_page
from headway.dashboard.web import (
    dashboard_of,
    flash,
    form_of,
    path_params,
    refusal,
    render,
    unreadable,
)
from headway.explain.story import Story
from headway.model.obj import Obj
from headway.redaction import redact_url_credentials
from headway.steering import apps as steering
from headway.steering.app_diff import compare
from headway.steering.explain import page_story

__all__ = ["ROUTES", "WHO"]

WHO = "headway-dashboard"  # initiatedBy.username of what the dashboard requests
_OWNED_KINDS = (
    ("apps/v1", "ReplicaSet"), ("v1", "Pod"), ("argoproj.io/v1alpha1", "AnalysisRun"),
    ("batch/v1", "Job"),
)


async def applications(request: Request) -> Response:
    return render(request, "applications.html", section="applications", rows=_rows(request))


async def applications_table(request: Request) -> Response:
    return render(request, "app_table.html", rows=_rows(request))


async def application_row(request: Request) -> Response:
    """One row of the list, fetched again when that Application changes (empty once it is
    gone: the list itself is fetched again then, as its `apps` topic says)."""
    p = path_params(request)
    try:
        app = dashboard_of(request).cluster.get(
            APP_API_VERSION, "Application", p["name"], p["namespace"]
        )
    except NotFound:
        return Response("", media_type="text/html")
    return render(request, "app_row.html", r=app_page.app_row(app))


def _rows(request: Request) -> list[app_page.AppRow]:
    found = dashboard_of(request).cluster.list(APP_API_VERSION, "Application")
    return app_page.app_rows(found)


def _live(request: Request, app: Obj) -> tuple[dict[tuple[str, str, str], Obj], list[Obj]]:
    """The app's live resources by (kind, namespace, name), and what they may own."""
    cluster = dashboard_of(request).cluster
    live: dict[tuple[str, str, str], Obj] = {}
    namespaces: set[str] = set()
    for r in app_page.resource_entries(app):
        api = f"{r['group']}/{r.get('version')}" if r.get("group") else str(r.get("version"))
        key = (str(r.get("kind")), str(r.get("namespace") or ""), str(r.get("name")))
        try:
            live[key] = cluster.get(api, key[0], key[2], key[1] or None)
        except ClusterError:
            continue
        namespaces.add(key[1])
    owned: list[Obj] = []
    for namespace in sorted(n for n in namespaces if n):
        for api, kind in _OWNED_KINDS:
            try:
                owned.extend(cluster.list(api, kind, namespace=namespace))
            except ClusterError:
                continue
    return live, owned


def _commit_messages(request: Request, app: Obj) -> dict[str, str]:
    reader: Callable[[str, str], str | None] | None = dashboard_of(request).commit_message
    if reader is None:
        return {}
    url = app_page.source_url(app)
    out = {}
    for entry in app_page.history_entries(app):
        revision = str(entry.get("revision") or "")
        message = reader(url, revision) if url and revision else None
        if message:
            out[revision] = message
    return out


def _what(request: Request) -> str:
    p = path_params(request)
    return f"application {p['namespace']}/{p['name']}"


def _story(request: Request) -> Story | None:
    """What `headway explain app` prints for this Application (None once it is gone)."""
    board, p = dashboard_of(request), path_params(request)
    try:
        return page_story(board.cluster, board.state_dir, kind="Application",
                          namespace=p["namespace"], name=p["name"])
    except NotFound:
        return None


def _page(request: Request) -> app_page.AppPage | None:
    p = path_params(request)
    try:
        app = dashboard_of(request).cluster.get(
            APP_API_VERSION, "Application", p["name"], p["namespace"]
        )
    except NotFound:
        return None
    live, owned = _live(request, app)
    messages = _commit_messages(request, app)
    return app_page.app_page(app, live_by_key=live, owned=owned, commit_messages=messages)


async def application(request: Request) -> Response:
    try:
        page = _page(request)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        return unreadable(request, _what(request), err, fragment=False)
    if page is None:
        return render(request, "missing.html", status_code=404, section="applications",
                      what=f"application {path_params(request)['namespace']}/"
                      f"{path_params(request)['name']}")
    return render(request, "application.html", section="applications", page=page,
                  story=_story(request))


async def application_body(request: Request) -> Response:
    try:
        page = _page(request)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        return unreadable(request, _what(request), err, fragment=True)
    if page is None:
        return render(request, "gone.html", status_code=200, what="this application")
    return render(request, "app_body.html", page=page, story=_story(request))


async def application_diff(request: Request) -> Response:
    """The diff of every resource that differs, rendered from Git as `headway app diff`."""
    board, p = dashboard_of(request), path_params(request)
    try:
        comparison, errors = await run_in_threadpool(
            compare, board.cluster, state_dir=board.state_dir, clock=board.clock,
            name=p["name"], namespace=p["namespace"],
        )
    except NotFound:
        return flash("the application is gone", ok=False, status_code=404)
    if comparison is None:
        return flash(redact_url_credentials("cannot compare: " + "; ".join(errors)), ok=False)
    sections = [
        (f"{key.group}/{key.kind} {key.namespace}/{key.name}",
         redact_url_credentials("\n".join(d.diff_lines)))
        for key, d in sorted(comparison.diffs.items())
        if d.modified
    ]
    return render(request, "app_diff.html", sections=sections,
                  warnings=[redact_url_credentials(w) for w in comparison.ignore_warnings])


def _act(request: Request, form: Mapping[str, str]) -> str:
    board, p = dashboard_of(request), path_params(request)
    action = p["action"]
    if action == "refresh":
        steering.request_refresh(board.cluster, p["name"], p["namespace"], hard=False, who=WHO)
        return f"refresh of {p['name']} requested"
    app = board.cluster.get(APP_API_VERSION, "Application", p["name"], p["namespace"])
    if action == "sync":
        return steering.request_sync(board.cluster, app, who=WHO, prune=bool(form.get("prune")))
    if action == "terminate":
        return steering.terminate(board.cluster, app, who=WHO)
    branches = steering.git_branches(board.cluster, board.state_dir / "git-cache-dashboard")
    return steering.request_rollback(
        board.cluster, app, who=WHO, wanted=str(form.get("id")), open_branch=branches,
        reason=str(form.get("reason") or ""),
    )


async def application_action(request: Request) -> Response:
    refused = refusal(request)
    if refused is not None:
        return refused
    if path_params(request)["action"] not in ("sync", "refresh", "terminate", "rollback"):
        return flash("no such action", ok=False, status_code=404)
    form = await form_of(request)
    try:
        return flash(_act(request, form), ok=True)
    except NotFound:
        return flash("the application is gone", ok=False, status_code=404)
    except steering.AppCommandError as err:
        return flash(f"refused: {err}", ok=False, status_code=409)


ROUTES = [
    Route("/applications", applications),
    Route("/applications/table", applications_table),
    Route("/applications/{namespace}/{name}", application),
    Route("/applications/{namespace}/{name}/body", application_body),
    Route("/applications/{namespace}/{name}/row", application_row),
    Route("/applications/{namespace}/{name}/diff", application_diff),
    Route("/applications/{namespace}/{name}/actions/{action}", application_action,
          methods=["POST"]),
]
