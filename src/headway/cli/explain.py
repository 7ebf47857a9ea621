"""`headway explain rollout NAME` / `headway explain app NAME`: the last operation's story.

Reads the object, what it owns (a Rollout's AnalysisRuns), their Events and the decision
journal of the state directory (`decisions.sqlite`, written by `headway serve`), and prints
the story `headway.explain` tells, as text or with `-o json`. Without the journal (another
machine, an older serve) the story is told from status and Events, and says what it lacks.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import typer

from headway.cli.targets import Context, Kubeconfig, Target, open_target
from headway.cluster.errors import NotFound

__all__ = ["register"]

explain_app = typer.Typer(
    help="The story of an object's last operation, in plain words.", no_args_is_help=True
)
StateDir = Annotated[
    Path, typer.Option("--state-dir", help="State directory (its store and decision journal).")
]


class StoryFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


Output = Annotated[StoryFormat, typer.Option("-o", "--output", help="text or json.")]


def _tell(
    kind: Literal["rollout", "app"],
    target: Target,
    *,
    namespace: str,
    name: str,
    output: StoryFormat,
) -> None:
    """Read the object's story and print it; a missing object is one line."""
    # The journal (SQLite) and the story teller load only when a story is told.
    from headway.steering.explain import app_of, open_journal, rollout_of

    teller = rollout_of if kind == "rollout" else app_of
    journal = open_journal(target.state_dir)
    with open_target(target) as cluster:
        try:
            story = teller(cluster, journal, namespace, name)
        except NotFound as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
    if output is StoryFormat.JSON:
        typer.echo(json.dumps(story.to_json(), indent=2))
    else:
        typer.echo(story.to_text(), nl=False)


@explain_app.command("rollout")
def explain_rollout(  # noqa: PLR0917 (typer maps each parameter to an option)
    name: Annotated[str, typer.Argument(help="The Rollout's name.")],
    namespace: Annotated[str, typer.Option("-n", "--namespace")] = "default",
    output: Output = StoryFormat.TEXT,
    state_dir: StateDir = Path(".headway"),
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """A Rollout's last update: every measurement, its query and thresholds, each verdict."""
    target = Target(state_dir, kubeconfig, context)
    _tell("rollout", target, namespace=namespace, name=name, output=output)


@explain_app.command("app")
def explain_application(  # noqa: PLR0917 (typer maps each parameter to an option)
    name: Annotated[str, typer.Argument(help="The Application's name.")],
    namespace: Annotated[str, typer.Option("-n", "--namespace")] = "argocd",
    output: Output = StoryFormat.TEXT,
    state_dir: StateDir = Path(".headway"),
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """An Application's last sync: what each wave applied, why it waited, how it ended."""
    target = Target(state_dir, kubeconfig, context)
    _tell("app", target, namespace=namespace, name=name, output=output)


def register(app: typer.Typer) -> None:
    app.add_typer(explain_app, name="explain")
