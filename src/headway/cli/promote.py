"""`headway promote`, `headway approve`, `headway deny`, `headway promotions list|get|watch`.

    headway promote APP --to ENV --image TAG [--break-glass --reason TEXT]
    headway promote APP --to ENV --rollback
    headway promote APP --to ENV --image TAG --hotfix --reason TEXT
    headway approve PROMOTION [--comment TEXT]
    headway deny PROMOTION [--comment TEXT]
    headway promotions list [--app APP] | get PROMOTION | watch PROMOTION

Each writes to or reads the store (`--state-dir`, or `--kubeconfig`/`--context`); the
promotion controller in `headway serve` does the rest. Who you are comes from `--as`, else
`$HEADWAY_USER`, else `git config user.email` (docs/promotion.md: how far that can be trusted).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Annotated

import typer

from headway.cli.targets import Context, Kubeconfig, Target, open_target
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = ["register"]

StateDir = Annotated[Path, typer.Option("--state-dir", help="Runtime state directory.")]
Namespace = Annotated[
    str, typer.Option("-n", "--namespace", help="Where promotions and pipelines live.")
]
As = Annotated[
    str | None,
    typer.Option("--as", help="Who you are (default: $HEADWAY_USER, then git's user.email)."),
]
Comment = Annotated[str, typer.Option("--comment", help="Recorded with the decision.")]
PromotionName = Annotated[str, typer.Argument(help="The promotion (headway promotions list).")]
DEFAULT_STATE = Path(".headway")
DEFAULT_NAMESPACE = "argocd"

promotions_app = typer.Typer(help="List, show and follow promotions.", no_args_is_help=True)


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def identity(given: str | None) -> str:
    """`--as`, else $HEADWAY_USER, else `git config user.email` (then user.name)."""
    for value in (given, os.environ.get("HEADWAY_USER")):
        if value and value.strip():
            return value.strip()
    for key in ("user.email", "user.name"):
        try:
            found = subprocess.run(
                ["git", "config", key], capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            found = ""
        if found:
            return found
    raise _fail("cannot tell who you are: pass --as, set HEADWAY_USER or git's user.email", 2)


def _target(state_dir: Path, kubeconfig: Path | None, context: str | None) -> Target:
    return Target(state_dir, kubeconfig, context)


def promote(  # noqa: PLR0917 (typer maps each parameter to an option)
    app: Annotated[str, typer.Argument(help="The pipeline (PromotionPipeline name).")],
    to: Annotated[str, typer.Option("--to", help="The environment to promote into.")],
    image: Annotated[
        str | None, typer.Option("--image", help="A tag, or a whole image reference.")
    ] = None,
    rollback: Annotated[
        bool,
        typer.Option("--rollback", help="Promote the previous good image of --to, gated."),
    ] = False,
    break_glass: Annotated[
        bool,
        typer.Option("--break-glass", help="Skip the pipeline and the gate (needs --reason)."),
    ] = False,
    hotfix: Annotated[
        bool,
        typer.Option("--hotfix", help="Skip analysis, force a new pod template (needs --reason)."),
    ] = False,
    reason: Annotated[
        str, typer.Option("--reason", help="Why break-glass or hotfix (recorded).")
    ] = "",
    as_user: As = None,
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Promote an image into one environment of a pipeline (a commit, behind its gates)."""
    from headway.clock import SystemClock
    from headway.promotion.requests import Request, RequestRefused, request_promotion

    if rollback == (image is not None):
        raise _fail("give exactly one of --image TAG and --rollback", 2)
    if (break_glass or hotfix) != bool(reason.strip()):
        raise _fail("--break-glass and --hotfix need --reason TEXT; --reason goes with them", 2)
    request = Request(
        pipeline=app,
        namespace=namespace,
        environment=to,
        image=image or "",
        author=identity(as_user),
        rollback=rollback,
        break_glass_reason=reason.strip() if break_glass else "",
        hotfix_reason=reason.strip() if hotfix else "",
    )
    with open_target(_target(state_dir, kubeconfig, context)) as cluster:
        try:
            spec = request_promotion(cluster, request, now=SystemClock().now())
        except RequestRefused as err:
            raise _fail(str(err)) from None
    glass = " (BREAK-GLASS, recorded)" if spec.break_glass else ""
    glass += " (HOTFIX: analysis skipped, recorded)" if spec.hotfix_reason else ""
    typer.echo(f"promotion {spec.name}: {spec.image} -> {spec.environment} by {spec.author}{glass}")


def _decide(
    verdict: str,
    name: str,
    *,
    as_user: str | None,
    comment: str,
    namespace: str,
    target: Target,
) -> None:
    from headway.clock import SystemClock
    from headway.promotion.approval import Decision
    from headway.promotion.requests import RequestRefused, record_decision

    who = identity(as_user)
    decision = Decision(verdict, who, SystemClock().now(), "cli", comment)
    with open_target(target) as cluster:
        try:
            spec = record_decision(cluster, namespace=namespace, name=name, decision=decision)
        except NotFound:
            raise _fail(f"no promotion {namespace}/{name}") from None
        except RequestRefused as err:
            raise _fail(str(err)) from None
    word = "approved" if verdict == "approve" else "denied"
    typer.echo(f"{word} {spec.name} ({spec.image} -> {spec.environment}) as {who}")


def approve(  # noqa: PLR0917 (typer maps each parameter to an option)
    name: PromotionName,
    as_user: As = None,
    comment: Comment = "",
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Approve a promotion waiting at its gate (not your own change; you must be listed)."""
    target = _target(state_dir, kubeconfig, context)
    _decide("approve", name, as_user=as_user, comment=comment, namespace=namespace, target=target)


def deny(  # noqa: PLR0917 (typer maps each parameter to an option)
    name: PromotionName,
    as_user: As = None,
    comment: Comment = "",
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Deny a promotion waiting at its gate."""
    target = _target(state_dir, kubeconfig, context)
    _decide("deny", name, as_user=as_user, comment=comment, namespace=namespace, target=target)


def _get(cluster: Cluster, namespace: str, name: str) -> Obj:
    from headway.promotion.record import API_VERSION, KIND

    try:
        return cluster.get(API_VERSION, KIND, name, namespace)
    except NotFound:
        raise _fail(f"no promotion {namespace}/{name}") from None


@promotions_app.command("list")
def list_promotions(
    app: Annotated[str | None, typer.Option("--app", help="Only this pipeline.")] = None,
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Every promotion, oldest first: pipeline, environment, image, phase, and why."""
    from headway.cli.promote_view import table
    from headway.promotion.record import API_VERSION, KIND

    with open_target(_target(state_dir, kubeconfig, context)) as cluster:
        found = cluster.list(API_VERSION, KIND, namespace=namespace)
    typer.echo(table(found, pipeline=app))


@promotions_app.command("get")
def get_promotion(
    name: PromotionName,
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """One promotion: what was asked, its gate and every decision, its commits."""
    from headway.cli.promote_view import details
    from headway.promotion.record import API_VERSION, KIND

    with open_target(_target(state_dir, kubeconfig, context)) as cluster:
        obj = _get(cluster, namespace, name)
        siblings = cluster.list(API_VERSION, KIND, namespace=namespace)
        typer.echo(details(obj, siblings))


@promotions_app.command("watch")
def watch_promotion(  # noqa: PLR0917 (typer maps each parameter to an option)
    name: PromotionName,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before giving up.")] = 0,
    namespace: Namespace = DEFAULT_NAMESPACE,
    state_dir: StateDir = DEFAULT_STATE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Print each phase change until the promotion ends; exit 0 on Succeeded, 1 otherwise."""
    from headway.promotion.record import TERMINAL, Phase, read_status

    deadline = time.monotonic() + timeout if timeout > 0 else None
    seen = ""
    with open_target(_target(state_dir, kubeconfig, context)) as cluster:
        while True:
            status = read_status(_get(cluster, namespace, name))
            line = f"{status.phase.value}: {status.message}"
            if line != seen:
                typer.echo(line)
                seen = line
            if status.phase in TERMINAL:
                raise typer.Exit(0 if status.phase is Phase.SUCCEEDED else 1)
            if deadline is not None and time.monotonic() >= deadline:
                raise _fail(f"{name} still {status.phase.value} after {timeout:g}s")
            time.sleep(1.0)


def register(app: typer.Typer) -> None:
    app.command("promote")(promote)
    app.command("approve")(approve)
    app.command("deny")(deny)
    app.add_typer(promotions_app, name="promotions")
