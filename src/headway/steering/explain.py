"""The story of an object's last operation, read from the cluster and the decision journal:
one reader behind `headway explain` and the dashboard's Explain sections, so both tell the
same story from the same records (`headway.explain` writes it, purely)."""

from __future__ import annotations

from pathlib import Path

from headway.cluster.events import events_for
from headway.cluster.protocol import Cluster
from headway.decisions import DecisionJournal, NullJournal, SqliteJournal, Subject, journal_path
from headway.explain.app_story import app_story
from headway.explain.rollout_story import RunEvidence, last_update_runs, rollout_story
from headway.explain.story import Story, StoryLine
from headway.redaction import redact_url_credentials, redact_urls_in

__all__ = ["app_of", "open_journal", "page_story", "redacted", "rollout_of"]

ARGO_API = "argoproj.io/v1alpha1"


def open_journal(state_dir: Path) -> DecisionJournal:
    """The state directory's journal, or an empty one when `headway serve` never wrote it."""
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
    """A Rollout's last update; raises NotFound when the Rollout is gone."""
    rollout = cluster.get(ARGO_API, "Rollout", name, namespace)
    uid = str(rollout["metadata"].get("uid"))
    runs = last_update_runs(rollout, _owned(cluster, "AnalysisRun", namespace, uid))
    evidence = [_run_evidence(journal, dict(r)) for r in runs]
    return rollout_story(rollout, evidence, events_for(cluster, rollout))


def app_of(cluster: Cluster, journal: DecisionJournal, namespace: str, name: str) -> Story:
    """An Application's last sync; raises NotFound when the Application is gone."""
    app = cluster.get(ARGO_API, "Application", name, namespace)
    state = (app.get("status") or {}).get("operationState") or {}
    subject = Subject("Application", namespace, name)
    records, dropped = journal.records(subject, str(state.get("startedAt") or ""))
    return app_story(app, records=records, dropped=dropped, events=events_for(cluster, app))


def redacted(story: Story) -> Story:
    """The story with URL credentials masked in every text a page shows (the journal keeps
    queries redacted already; a message from Git or an Event may still carry a token)."""
    lines = tuple(
        StoryLine(at=x.at, type=x.type, text=redact_url_credentials(x.text),
                  data=redact_urls_in(dict(x.data)), depth=x.depth)
        for x in story.lines
    )
    return Story(
        subject=story.subject,
        outcome=redact_url_credentials(story.outcome),
        lines=lines,
        sources=story.sources,
        notes=tuple(redact_url_credentials(n) for n in story.notes),
    )


def page_story(cluster: Cluster, state_dir: Path, *, kind: str, namespace: str, name: str) -> Story:
    """The story a page shows (kind `Application` or `Rollout`), redacted, the journal
    opened for this read only; raises NotFound when the object is gone."""
    journal = open_journal(state_dir)
    tell = app_of if kind == "Application" else rollout_of
    try:
        return redacted(tell(cluster, journal, namespace, name))
    except (AttributeError, KeyError, TypeError, ValueError) as err:  # a hand-edited status
        return Story(
            subject=f"{kind} {namespace}/{name}",
            outcome=redact_url_credentials(f"cannot be told: a status is malformed ({err!r})"),
            lines=(),
            sources=(),
        )
    finally:
        if isinstance(journal, SqliteJournal):
            journal.close()
