"""The Promotions page: every promotion with its gate, and approve / deny for a promotion
awaiting approval, through `headway.promotion.requests.record_decision`, the function
`headway approve` and `headway deny` call (so the author cannot approve their own change, and
only the environment's listed approvers count).

Who decides is the name given at login, as `--as` is on the command line: the token proves
the person may act through this dashboard, the name says who they are (docs/dashboard.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from headway.cluster.errors import ClusterError, NotFound
from headway.dashboard.web import COOKIE, dashboard_of, flash, path_params, refusal, render
from headway.model.promotion_pipeline import PIPELINE_KIND, Environment
from headway.promotion import record
from headway.promotion.approval import Decision
from headway.promotion.environments import PIPELINE_API, load_pipeline
from headway.promotion.requests import RequestRefused, record_decision

__all__ = ["ROUTES", "PromotionRow", "promotion_rows"]

VERDICTS = {"approve": "approve", "deny": "deny"}


@dataclass(frozen=True)
class PromotionRow:
    namespace: str
    name: str
    pipeline: str
    environment: str
    image: str
    phase: str
    author: str
    gate: str  # the approval's verdict and deadline, when there is one
    message: str
    awaiting: bool


def promotion_rows(request: Request) -> tuple[list[PromotionRow], str]:
    """The promotions, oldest first, or none and why they cannot be read."""
    try:
        found = dashboard_of(request).cluster.list(record.API_VERSION, record.KIND)
    except ClusterError as err:
        return [], f"promotions cannot be read here: {err}"
    rows = []
    for obj in found:
        spec, status = record.read_spec(obj), record.read_status(obj)
        approval = status.approval
        gate = (f"{approval.verdict}, deadline {approval.deadline.isoformat()}"
                + (f", decided by {approval.decided_by}" if approval.decided_by else "")
                if approval else "")
        rows.append((spec.requested_at, PromotionRow(
            namespace=spec.namespace, name=spec.name, pipeline=spec.pipeline,
            environment=spec.environment, image=spec.image, phase=status.phase.value,
            author=spec.author + (" (break-glass)" if spec.break_glass else ""), gate=gate,
            message=status.message, awaiting=status.phase is record.Phase.AWAITING_APPROVAL,
        )))
    return [row for _, row in sorted(rows, key=lambda pair: (pair[0], pair[1].name))], ""


@dataclass(frozen=True)
class StageView:
    environment: str
    application: str
    gate: str
    latest: PromotionRow | None  # the newest promotion into this environment


@dataclass(frozen=True)
class PipelineView:
    namespace: str
    name: str
    image: str
    problem: str  # why the pipeline cannot be read, when it cannot
    stages: tuple[StageView, ...]


def _gate(env: Environment) -> str:
    approval = env.gate.approval
    if not approval.required:
        return "automatic" if env.auto_promote else "no approval"
    who = ", ".join(approval.approvers) or "nobody listed"
    return f"approval by {who} within {approval.timeout:g} s"


def pipeline_views(request: Request, rows: list[PromotionRow]) -> list[PipelineView]:
    """Each pipeline's environments in order, with its gate and its newest promotion."""
    cluster = dashboard_of(request).cluster
    try:
        found = cluster.list(PIPELINE_API, PIPELINE_KIND)
    except ClusterError:
        return []
    views = []
    for obj in found:
        name, namespace = str(obj["metadata"]["name"]), str(obj["metadata"].get("namespace"))
        pipeline = load_pipeline(cluster, name, namespace)
        if isinstance(pipeline, str):
            views.append(PipelineView(namespace, name, "", pipeline, ()))
            continue
        newest = {(r.namespace, r.pipeline, r.environment): r for r in rows}  # rows: oldest first
        stages = tuple(
            StageView(env.name, env.application, _gate(env),
                      newest.get((namespace, name, env.name)))
            for env in pipeline.spec.environments
        )
        views.append(PipelineView(namespace, name, pipeline.spec.image, "", stages))
    return sorted(views, key=lambda v: (v.namespace, v.name))


async def promotions(request: Request) -> Response:
    rows, problem = promotion_rows(request)
    return render(request, "promotions.html", section="promotions", rows=rows, problem=problem,
                  pipelines=pipeline_views(request, rows))


async def promotions_table(request: Request) -> Response:
    rows, problem = promotion_rows(request)
    return render(request, "promotion_table.html", rows=rows, problem=problem,
                  pipelines=pipeline_views(request, rows))


async def promotion_action(request: Request) -> Response:
    refused = refusal(request)
    if refused is not None:
        return refused
    board, p = dashboard_of(request), path_params(request)
    verdict = VERDICTS.get(p["action"])
    if verdict is None:
        return flash("no such action", ok=False, status_code=404)
    who = board.sessions.identity_of(request.cookies.get(COOKIE))
    if not who:
        return flash("refused: log in again giving your name: approvals record who decided",
                     ok=False, status_code=403)
    decision = Decision(verdict, who, board.clock.now(), "dashboard")
    try:
        spec = record_decision(board.cluster, namespace=p["namespace"], name=p["name"],
                               decision=decision)
    except NotFound:
        return flash(f"no promotion {p['namespace']}/{p['name']}", ok=False, status_code=404)
    except RequestRefused as err:
        return flash(str(err) if str(err).startswith("refused") else f"refused: {err}",
                     ok=False, status_code=409)
    word = "approved" if verdict == "approve" else "denied"
    return flash(f"{word} {spec.name} ({spec.image} -> {spec.environment}) as {who}", ok=True)


ROUTES = [
    Route("/promotions", promotions),
    Route("/promotions/table", promotions_table),
    Route("/promotions/{namespace}/{name}/actions/{action}", promotion_action, methods=["POST"]),
]
