"""The Rollouts pages and their actions (promote, abort, retry, pause), through
`headway.steering.rollouts`, as `headway rollouts` does them: so promote is refused on a
Failed or Errored run here as on the command line."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.dashboard import rollout_page
from headway.dashboard.web import dashboard_of, flash, path_params, refusal, render, unreadable
from headway.explain.story import Story
from headway.steering import rollouts as steering
from headway.steering.explain import page_story
from headway.steering.rollout_summary import ARGO_API, RolloutSummary, summarize

__all__ = ["ACTIONS", "ROUTES"]

ACTIONS: dict[str, Callable[[Cluster, str, str], str]] = {
    "promote": steering.promote,
    "abort": steering.abort,
    "retry": steering.retry,
    "pause": steering.pause,
}


def _rows(request: Request) -> list[rollout_page.RolloutRow]:
    return rollout_page.rows(dashboard_of(request).cluster.list(ARGO_API, "Rollout"))


async def rollouts(request: Request) -> Response:
    return render(request, "rollouts.html", section="rollouts", rows=_rows(request))


async def rollouts_table(request: Request) -> Response:
    return render(request, "rollout_table.html", rows=_rows(request))


def _what(request: Request) -> str:
    p = path_params(request)
    return f"rollout {p['namespace']}/{p['name']}"


def _page(request: Request) -> rollout_page.RolloutPage | None:
    """The page of the Rollout, read as `headway rollouts get` reads it."""
    from headway.controllers.rollout.inputs import parse_rollout_object
    from headway.rollout.status_shape import status_problem

    cluster, p = dashboard_of(request).cluster, path_params(request)
    try:
        obj = cluster.get(ARGO_API, "Rollout", p["name"], p["namespace"])
    except NotFound:
        return None
    malformed = status_problem(obj.get("status"))
    if malformed:  # nothing of the status can be trusted to show
        summary = RolloutSummary({**obj, "status": {}}, None, (), {}, ())
        return rollout_page.rollout_page(summary, f"InvalidSpec: {malformed}")
    rollout, problem = parse_rollout_object(obj)
    summary = summarize(cluster, p["namespace"], p["name"], rollout)
    return rollout_page.rollout_page(summary, f"InvalidSpec: {problem}" if problem else "")


def _story(request: Request) -> Story | None:
    """What `headway explain rollout` prints for this Rollout (None once it is gone)."""
    board, p = dashboard_of(request), path_params(request)
    try:
        return page_story(board.cluster, board.state_dir, kind="Rollout",
                          namespace=p["namespace"], name=p["name"])
    except NotFound:
        return None


async def _observed(request: Request, page: rollout_page.RolloutPage) -> str:
    """What the router counted for this Rollout's revisions since the last look."""
    board = dashboard_of(request)
    if board.traffic is None or page.row.strategy != "Canary":
        return ""
    key = f"{page.row.namespace}/{page.row.name}"
    return await board.traffic.line(key, canary=page.canary_hash, stable=page.stable_hash,
                                    now=board.clock.monotonic())


async def rollout(request: Request) -> Response:
    try:
        page = _page(request)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        return unreadable(request, _what(request), err, fragment=False)
    if page is None:
        p = path_params(request)
        return render(request, "missing.html", status_code=404, section="rollouts",
                      what=f"rollout {p['namespace']}/{p['name']}")
    return render(request, "rollout.html", section="rollouts", page=page,
                  observed=await _observed(request, page), story=_story(request))


async def rollout_body(request: Request) -> Response:
    try:
        page = _page(request)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        return unreadable(request, _what(request), err, fragment=True)
    if page is None:
        return render(request, "gone.html", what="this rollout")
    return render(request, "rollout_body.html", page=page,
                  observed=await _observed(request, page), story=_story(request))


async def rollout_action(request: Request) -> Response:
    refused = refusal(request)
    if refused is not None:
        return refused
    p = path_params(request)
    action = ACTIONS.get(p["action"])
    if action is None:
        return flash("no such action", ok=False, status_code=404)
    try:
        return flash(action(dashboard_of(request).cluster, p["namespace"], p["name"]), ok=True)
    except NotFound:
        return flash("the rollout is gone", ok=False, status_code=404)
    except steering.RolloutCommandError as err:
        return flash(f"refused: {err}", ok=False, status_code=409)


ROUTES = [
    Route("/rollouts", rollouts),
    Route("/rollouts/table", rollouts_table),
    Route("/rollouts/{namespace}/{name}", rollout),
    Route("/rollouts/{namespace}/{name}/body", rollout_body),
    Route("/rollouts/{namespace}/{name}/actions/{action}", rollout_action, methods=["POST"]),
]
