"""The Explain section of the Application and Rollout pages: the story `headway explain`
prints, from the same reader and the same decision journal, in the page body the live
updates fetch again, with URL credentials masked."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import httpx2
from dashboard_env import API, Scene

from headway.decisions import SqliteJournal, Subject, journal_path
from headway.steering.explain import app_of, open_journal, rollout_of

LEAKY_QUERY = "https://bot:s3cr3t-token@metrics.example.com/api?q=errors"


def _explain(scene: Scene, path: str) -> str:
    text = httpx2.get(scene.served.url + path, timeout=30).text
    found = re.search(r'<div id="explain">(.*?)</div>', text, re.S)
    assert found is not None, f"no Explain section on {path}"
    return html.unescape(found.group(1))


def _journal_a_measurement(scene: Scene) -> str:
    """A measurement the run's status does not keep (value 0.47), its query carrying a token;
    returns the run's name."""
    run = scene.harness.cluster.list(API, "AnalysisRun", namespace="default")[0]
    meta = run["metadata"]
    journal = SqliteJournal(journal_path(scene.state_dir))
    try:
        journal.record(
            Subject("AnalysisRun", "default", meta["name"]),
            operation=str(meta.get("uid") or meta["name"]),
            at=datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
            type="measurement",
            data={"metric": "error-rate", "value": "0.47", "phase": "Failed",
                  "metadata": {"ResolvedQuery": LEAKY_QUERY}},
        )
    finally:
        journal.close()
    return str(meta["name"])


def test_rollout_page_tells_what_explain_rollout_tells_from_the_journal(scene: Scene) -> None:
    run = _journal_a_measurement(scene)
    story = rollout_of(scene.harness.cluster, open_journal(scene.state_dir), "default", "web")
    for path in ("/rollouts/default/web", "/rollouts/default/web/body"):
        section = _explain(scene, path)
        assert f"AnalysisRun {run} started" in section
        assert "metric error-rate: value 0.47 -> Failed" in section
        assert "https://***@metrics.example.com/api?q=errors" in section
        assert "s3cr3t-token" not in section
        assert story.outcome in section
        assert "journal" in section  # told from the journal, as the CLI says


def test_rollout_page_says_when_the_journal_is_missing(scene: Scene) -> None:
    section = _explain(scene, "/rollouts/default/web")
    assert "not in the decision journal" in section
    assert "value 0.47" not in section


def test_application_page_tells_what_explain_app_tells(scene: Scene) -> None:
    story = app_of(scene.harness.cluster, open_journal(scene.state_dir), "argocd", "guestbook")
    section = _explain(scene, "/applications/argocd/guestbook/body")
    assert f"Application argocd/guestbook</strong>: {story.outcome}" in section
    for line in story.lines:
        assert line.text.replace("s3cr3t-token@", "***@") in section
    assert "s3cr3t-token" not in section


def test_a_malformed_run_is_told_as_far_as_it_can_be_not_the_page_broken(scene: Scene) -> None:
    run = scene.harness.runs()[0]
    name = run["metadata"]["name"]
    scene.harness.cluster.patch_status(API, "AnalysisRun", name, "default",
                                       {"phase": "Failed", "metricResults": 5})
    section = _explain(scene, "/rollouts/default/web")
    assert f"AnalysisRun {name} ended Failed" in section  # the rest of the story still told
