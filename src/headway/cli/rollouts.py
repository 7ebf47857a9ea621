"""`headway rollouts ...`: watch and steer Rollouts, as `kubectl argo rollouts` does.

    headway rollouts list
    headway rollouts get NAME [--watch]
    headway rollouts status NAME [--timeout 5m] [--no-watch]
    headway rollouts promote NAME [--full] | abort NAME | retry NAME | pause NAME
    headway rollouts restart NAME | undo NAME [--to-revision N]
    headway rollouts set image NAME CONTAINER=IMAGE

Every command works on the local runtime's store (`--state-dir`, default `.headway`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group, RenderableType
from rich.text import Text

from headway.cluster.errors import NotFound
from headway.model.obj import Obj
from headway.state_dir import RuntimePaths

# The store, the Rollout model and the steering actions load only when a command runs (not
# for --help): each command imports `headway.steering.rollouts` itself.
if TYPE_CHECKING:
    from headway.cluster.local.api.store import LocalCluster

rollouts_app = typer.Typer(help="Watch and steer Rollouts.", no_args_is_help=True)
set_app = typer.Typer(help="Change a Rollout's spec.", no_args_is_help=True)
rollouts_app.add_typer(set_app, name="set")

StateDir = Annotated[Path, typer.Option("--state-dir", help="Runtime state directory.")]
Namespace = Annotated[str, typer.Option("-n", "--namespace", help="The Rollout's namespace.")]
RolloutName = Annotated[str, typer.Argument(help="The Rollout's name.")]
DEFAULT_STATE = Path(".headway")
ROLLOUT_API = "argoproj.io/v1alpha1"
LIST_HEADERS = [
    "NAME", "STRATEGY", "STATUS", "STEP", "DESIRED", "CURRENT", "UP-TO-DATE", "AVAILABLE"
]


def _open(state_dir: Path) -> LocalCluster:
    paths = RuntimePaths(state_dir)
    if not paths.db.exists():
        typer.echo(f"error: no store at {paths.db}; run `headway runtime up` first", err=True)
        raise typer.Exit(1)
    from headway.clock import SystemClock
    from headway.cluster.local.api.store import LocalCluster

    return LocalCluster(paths.db, SystemClock())


def _run(state_dir: Path, action: Callable[[LocalCluster], str]) -> None:
    from headway.steering.rollouts import RolloutCommandError

    with _open(state_dir) as cluster:
        try:
            typer.echo(action(cluster))
        except NotFound as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
        except RolloutCommandError as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None


@rollouts_app.command("list")
def list_rollouts(
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
    all_namespaces: Annotated[
        bool, typer.Option("-A", "--all-namespaces", help="Rollouts of every namespace.")
    ] = False,
) -> None:
    """Every Rollout with its status, step and replicas (plain columns, never truncated, so
    a script reading a pipe gets whole names)."""
    with _open(state_dir) as cluster:
        rollouts = cluster.list(
            ROLLOUT_API, "Rollout", namespace=None if all_namespaces else namespace
        )
        if not rollouts:
            where = "" if all_namespaces else f" in namespace {namespace}"
            typer.echo(f"No Rollouts{where}{_elsewhere(cluster, None)}")
            return
    rollouts.sort(key=lambda ro: (str(ro["metadata"].get("namespace")), ro["metadata"]["name"]))
    headers = ["NAMESPACE", *LIST_HEADERS] if all_namespaces else LIST_HEADERS
    rows = [headers] + [
        [str(ro["metadata"].get("namespace") or "default"), *_list_row(ro)]
        if all_namespaces
        else _list_row(ro)
        for ro in rollouts
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    for row in rows:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _elsewhere(cluster: LocalCluster, name: str | None) -> str:
    """Where else Rollouts (named `name`, or any) are: the hint that `-n` was forgotten."""
    namespaces = sorted(
        {
            str(ro["metadata"].get("namespace") or "default")
            for ro in cluster.list(ROLLOUT_API, "Rollout")
            if name is None or ro["metadata"].get("name") == name
        }
    )
    if not namespaces:
        return ""
    where = (
        "namespaces " + ", ".join(namespaces)
        if len(namespaces) > 1
        else f"namespace {namespaces[0]}"
    )
    return f"; found in {where} (add -n {namespaces[0]})"


def _mapping(value: object) -> dict[str, Any]:
    """A malformed field (a number where a mapping belongs) lists as empty, not a crash."""
    return value if isinstance(value, dict) else {}


def _list_row(ro: Obj) -> list[str]:
    spec, status = _mapping(ro.get("spec")), _mapping(ro.get("status"))
    strategy_spec = _mapping(spec.get("strategy"))
    strategy = "BlueGreen" if strategy_spec.get("blueGreen") else "Canary"
    steps = _mapping(strategy_spec.get("canary")).get("steps")
    steps = steps if isinstance(steps, list) else []
    step = f"{status.get('currentStepIndex', 0)}/{len(steps)}" if steps else "-"
    return [
        str(ro["metadata"]["name"]),
        strategy,
        str(status.get("phase", "")),
        step,
        str(spec.get("replicas", 1)),
        str(status.get("replicas", 0)),
        str(status.get("updatedReplicas", 0)),
        str(status.get("availableReplicas", 0)),
    ]


@rollouts_app.command("get")
def get(
    name: RolloutName,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
    watch: Annotated[bool, typer.Option("--watch", "-w", help="Keep the view live.")] = False,
) -> None:
    """A Rollout: status, steps, weights, ReplicaSets, pods and analysis runs."""
    from headway.cli.rollouts_view import render, summarize
    from headway.controllers.rollout.inputs import parse_rollout_object
    from headway.rollout.status_shape import status_problem

    console = Console()
    with _open(state_dir) as cluster:

        def view() -> RenderableType:
            obj = cluster.get(ROLLOUT_API, "Rollout", name, namespace)
            malformed = status_problem(obj.get("status"))
            if malformed:  # nothing of the status can be trusted to show
                return Text(f"InvalidSpec: {malformed} (the controller does not act on it "
                            "until the status is mended)", "red")
            rollout, problem = parse_rollout_object(obj)
            shown = render(summarize(cluster, namespace, name, rollout))
            if not problem:
                return shown
            # Otherwise "Status: Unknown" alone does not say that the spec is why.
            invalid = Text(f"InvalidSpec: {problem} (the controller does not run it)", "red")
            return Group(invalid, shown)

        try:
            first = view()
        except NotFound:
            hint = _elsewhere(cluster, name)
            typer.echo(f"error: rollout {namespace}/{name} not found{hint}", err=True)
            raise typer.Exit(1) from None
        if not watch:
            console.print(first)
            return
        from rich.live import Live  # only a watch redraws

        try:
            with Live(first, console=console, refresh_per_second=4) as live:
                while True:
                    time.sleep(1.0)
                    live.update(view())
        except KeyboardInterrupt:
            return
        except NotFound:
            typer.echo(f"rollout {namespace}/{name} was deleted", err=True)
            raise typer.Exit(1) from None


@rollouts_app.command("status")
def status(
    name: RolloutName,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
    watch: Annotated[
        bool,
        typer.Option("--watch/--no-watch", "-w", help="Wait until the Rollout is done."),
    ] = True,
    timeout: Annotated[
        str,
        typer.Option(
            "--timeout", "-t", help="Give up after this long (30s, 5m; 0: wait forever)."
        ),
    ] = "0",
) -> None:
    """Wait for a Rollout to be Healthy (exit 0) or Degraded (exit 1), printing each change
    of its status, as `kubectl argo rollouts status`; exit 1 also when --timeout passes."""
    from headway.cli import rollouts_status as follow
    from headway.model.durations import DurationError, parse_duration

    try:
        seconds = parse_duration(timeout)
    except DurationError as err:
        raise typer.BadParameter(str(err), param_hint="'--timeout'") from None
    with _open(state_dir) as cluster:

        def read() -> Obj:
            return cluster.get(ROLLOUT_API, "Rollout", name, namespace)

        try:
            if watch:
                outcome = follow.watch_status(
                    read, timeout=seconds, monotonic=time.monotonic, pause=time.sleep,
                    show=typer.echo,
                )
            else:
                state = follow.rollout_status(read())
                typer.echo(state.status if state.status in follow.DONE else state.line)
                outcome = follow.final_outcome(state, watched=False)
        except NotFound:
            hint = _elsewhere(cluster, name)
            typer.echo(f"error: rollout {namespace}/{name} not found{hint}", err=True)
            raise typer.Exit(1) from None
    if outcome.error:
        typer.echo(f"error: {outcome.error}", err=True)
    raise typer.Exit(outcome.code)


@rollouts_app.command("promote")
def promote(
    name: RolloutName,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
    full: Annotated[bool, typer.Option("--full", help="Skip all remaining steps.")] = False,
) -> None:
    """Resume a paused Rollout, or skip the current step (--full: all of them).

    Refused while a run of this revision has Failed or Errored (--full: or is Inconclusive)."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.promote(c, namespace, name, full=full))


@rollouts_app.command("abort")
def abort(
    name: RolloutName, state_dir: StateDir = DEFAULT_STATE, namespace: Namespace = "default"
) -> None:
    """Abort the update: all traffic back to the stable version."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.abort(c, namespace, name))


@rollouts_app.command("retry")
def retry(
    name: RolloutName, state_dir: StateDir = DEFAULT_STATE, namespace: Namespace = "default"
) -> None:
    """Start an aborted update again from its first step."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.retry(c, namespace, name))


@rollouts_app.command("pause")
def pause(
    name: RolloutName, state_dir: StateDir = DEFAULT_STATE, namespace: Namespace = "default"
) -> None:
    """Pause the Rollout (spec.paused)."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.pause(c, namespace, name))


@rollouts_app.command("restart")
def restart(
    name: RolloutName, state_dir: StateDir = DEFAULT_STATE, namespace: Namespace = "default"
) -> None:
    """Restart the Rollout's pods (spec.restartAt = now)."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.restart(c, namespace, name, now=c.clock.now()))


@rollouts_app.command("undo")
def undo(
    name: RolloutName,
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
    to_revision: Annotated[
        int | None,
        typer.Option("--to-revision", help="Revision to go back to (default: the previous)."),
    ] = None,
) -> None:
    """Go back to a previous revision's pod template."""
    from headway.steering import rollouts as actions

    _run(state_dir, lambda c: actions.undo(c, namespace, name, to_revision=to_revision))


@set_app.command("image")
def set_image(
    name: RolloutName,
    assignment: Annotated[
        str, typer.Argument(metavar="CONTAINER=IMAGE", help="e.g. web=headway-demo/web:v2")
    ],
    state_dir: StateDir = DEFAULT_STATE,
    namespace: Namespace = "default",
) -> None:
    """Set a container's image."""
    container, sep, image = assignment.partition("=")
    if not sep or not container or not image:
        typer.echo(f"error: expected CONTAINER=IMAGE, got {assignment!r}", err=True)
        raise typer.Exit(2)
    from headway.steering import rollouts as actions

    _run(
        state_dir, lambda c: actions.set_image(c, namespace, name, container=container, image=image)
    )


def register(app: typer.Typer) -> None:
    app.add_typer(rollouts_app, name="rollouts")
