"""`headway explain app`: a sync whose wave 0 waited on a Deployment before wave 1 ran, told
from the decision journal the Application controller keeps (which wave applied what, which
resource it waited on and in which health, how it ended)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_harness import APPS_NS, application, config_map, deployment, make_harness, manifests
from typer.testing import CliRunner

from headway.cli.main import app as cli
from headway.clock import VirtualClock
from headway.controllers.app.controller import ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry
from headway.decisions import SqliteJournal, journal_path


def _explain(state: Path, *args: str) -> str:
    result = CliRunner().invoke(
        cli, ["explain", "app", "shop", "-n", APPS_NS, "--state-dir", str(state), *args]
    )
    assert result.exit_code == 0, result.output
    return result.output


def _synced(tmp_path: Path, clock: VirtualClock) -> Path:
    files = {"app/all.yaml": manifests(deployment("db", wave=0), config_map("web-config", wave=1))}
    h = make_harness(tmp_path, clock, files)
    journal = SqliteJournal(journal_path(tmp_path / "state"))
    h.controller = ApplicationController(
        store=h.store,
        clusters=ClusterRegistry(h.store),
        sources=h.reader,
        clock=clock,
        journal=journal,
    )
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", lambda s: "waiting" in str((s.get("operationState") or {}).get("message")))
    for _ in range(3):  # polls while the wave waits: the same wait is recorded once
        clock.advance(5)
        h.step("shop")
    h.make_ready("db")
    h.run("shop", lambda s: s["operationState"]["phase"] == "Succeeded")
    journal.close()
    h.store.close()
    return tmp_path / "state"


def test_the_story_names_each_wave_the_wait_and_the_end(
    tmp_path: Path, clock: VirtualClock
) -> None:
    state = _synced(tmp_path, clock)
    story: dict[str, Any] = json.loads(_explain(state, "-o", "json"))
    kinds = [x["type"] for x in story["lines"] if x["depth"] == 0 and x["type"] != "event"]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    assert kinds.count("waiting") == 1
    applied = [x["data"] for x in story["lines"] if x["type"] == "applied"]
    waves = [(a["wave"], [r["name"] for r in a["resources"]]) for a in applied]
    assert waves == [(0, ["db"]), (1, ["web-config"])]
    waiting = next(x for x in story["lines"] if x["type"] == "waiting")
    assert waiting["text"].startswith("wave 0 waiting: Deployment/db Progressing")
    assert story["lines"].index(waiting) < story["lines"].index(
        next(x for x in story["lines"] if x["type"] == "applied" and x["data"]["wave"] == 1)
    )
    assert story["outcome"].startswith("last sync Succeeded")
    text = _explain(state)
    assert "sync started by the automated sync policy" in text
    assert "wave 1: applied 1" in text


def test_without_the_journal_the_story_comes_from_status(
    tmp_path: Path, clock: VirtualClock
) -> None:
    state = _synced(tmp_path, clock)
    journal_path(state).unlink()
    story = json.loads(_explain(state, "-o", "json"))
    assert any("not in the decision journal" in note for note in story["notes"])
    assert [x["type"] for x in story["lines"] if x["type"] == "waiting"] == []
