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
from typing import Annotated

import typer

from headway.cli.targets import Context, Kubeconfig, Target, open_target
from headway.cluster.errors import NotFound
from headway.cluster.events import events_for
from headway.cluster.protocol import Cluster
from headway.decisions import DecisionJournal, NullJournal, SqliteJournal, Subject, journal_path
from headway.explain.app_story import app_story
from headway.explain.rollout_story import RunEvidence, last_update_runs, rollout_story
from headway.explain.story import Story

__all__ = ["register"]

ARGO_API = "argoproj.io/v1alpha1"
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


def _journal(state_dir: Path) -> DecisionJournal:
    path = journal_path(state_dir)
    return SqliteJournal(path) if path.exists() else NullJournal()


def _run_evidence(journal: DecisionJournal, run: dict[str, object]) -> RunEvidence:
    meta = run.get("metadata")
    assert isinstance(meta, dict)
    subject = Subject("AnalysisRun", str(meta.get("namespace") or ""), str(meta.get("name")))
    operation = str(meta.get("uid") or meta.get("name"))
    records, dropped = journal.records(subject, operation)
    return RunEvidence(run, records, dropped)


def _owned(cluster: Cluster, kind: str, namespace: str, uid: str) -> list[dict[str, object]]:
    return [
        o
        for o in cluster.list(ARGO_API, kind, namespace=namespace)
        if any(r.get("uid") == uid for r in (o["metadata"].get("ownerReferences") or []))
    ]


def rollout_of(cluster: Cluster, journal: DecisionJournal, namespace: str, name: str) -> Story:
    rollout = cluster.get(ARGO_API, "Rollout", name, namespace)
    uid = str(rollout["metadata"].get("uid"))
    runs = last_update_runs(rollout, _owned(cluster, "AnalysisRun", namespace, uid))
    evidence = [_run_evidence(journal, dict(r)) for r in runs]
    return rollout_story(rollout, evidence, events_for(cluster, rollout))


def app_of(cluster: Cluster, journal: DecisionJournal, namespace: str, name: str) -> Story:
    app = cluster.get(ARGO_API, "Application", name, namespace)
    state = (app.get("status") or {}).get("operationState") or {}
    subject = Subject("Application", namespace, name)
    records, dropped = journal.records(subject, str(state.get("startedAt") or ""))
    return app_story(app, records=records, dropped=dropped, events=events_for(cluster, app))


def _print(story: Story, output: StoryFormat) -> None:
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
    journal = _journal(state_dir)
    with open_target(Target(state_dir, kubeconfig, context)) as cluster:
        try:
            story = rollout_of(cluster, journal, namespace, name)
        except NotFound as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
    _print(story, output)


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
    journal = _journal(state_dir)
    with open_target(Target(state_dir, kubeconfig, context)) as cluster:
        try:
            story = app_of(cluster, journal, namespace, name)
        except NotFound as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
    _print(story, output)


def register(app: typer.Typer) -> None:
    app.add_typer(explain_app, name="explain")
