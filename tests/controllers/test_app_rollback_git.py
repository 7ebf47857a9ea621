"""A rollback is a commit: `headway app rollback` (and the dashboard, through the same steering
function) restores the files the Application reads in Git, so automated sync keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest
from app_harness import APPS_NS, Harness, application, config_map, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.names import APP_API_VERSION
from headway.controllers.convergence.rollback import write_rollback
from headway.controllers.convergence.rollback_outbox import RollbackOutbox, read_pending
from headway.controllers.manager import ObjectKey
from headway.model.rollback_pending import ROLLBACK_PENDING_ANNOTATION
from headway.steering import apps as steering

WHO = "headway-test"


def _tip(h: Harness) -> pygit2.Commit:
    return h.remote.repo.references["refs/heads/main"].peel(pygit2.Commit)


def _file(h: Harness, path: str) -> str | None:
    try:
        return bytes(h.remote.repo[_tip(h).tree[path].id].data).decode()
    except KeyError:
        return None


def _rollback(h: Harness, tmp_path: Path, wanted: str, **kwargs: Any) -> str:
    branches = steering.git_branches(h.store, tmp_path / "rollback-cache")
    return steering.request_rollback(
        h.store, h.app("shop"), who=WHO, wanted=wanted, open_branch=branches, **kwargs
    )


def _release(h: Harness, files: dict[str, str | None], *, count: int) -> None:
    """Commit `files`; automated sync picks the commit up: history reaches `count`."""
    h.remote.commit(files, "release")
    h.reader.mark_changed(h.remote.url)
    h.clock.advance(1)
    h.run("shop", lambda s: len(s.get("history") or []) == count)


def _automated_shop(tmp_path: Path, clock: VirtualClock) -> Harness:
    files = {
        "app/all.yaml": manifests(config_map("a")),
        "other/all.yaml": manifests(config_map("z")),
    }
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", lambda s: len(s.get("history") or []) == 1)
    return h


def test_rollback_under_auto_sync_is_committed_and_auto_sync_keeps_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _automated_shop(tmp_path, clock)
    first = h.status("shop")["history"][0]["revision"]
    original = _file(h, "app/all.yaml")
    _release(
        h,
        {
            "app/all.yaml": manifests({**config_map("a"), "data": {"k": "bad"}}),
            "app/extra.yaml": manifests(config_map("b")),
            "other/all.yaml": manifests({**config_map("z"), "data": {"k": "other team"}}),
        },
        count=2,
    )
    assert h.get("ConfigMap", "a")["data"] == {"k": "bad"} and h.exists("ConfigMap", "b")
    out = _rollback(h, tmp_path, "0", reason="bad k")
    tip = _tip(h)
    assert out.endswith(f"committed {str(tip.id)[:12]}"), out
    # The files the app reads are as they were; the other app's change stays.
    assert _file(h, "app/all.yaml") == original
    assert _file(h, "app/extra.yaml") is None
    assert "other team" in str(_file(h, "other/all.yaml"))
    assert tip.message.splitlines()[0] == f"Roll back {APPS_NS}/shop to {first[:12]} (history 0)"
    assert "Requested by headway-test: bad k." in tip.message
    assert (
        "Headway-Rollback-From: " in tip.message and f"Headway-Rollback-To: {first}" in tip.message
    )
    h.run("shop", lambda s: len(s.get("history") or []) == 3)
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"} and not h.exists("ConfigMap", "b")
    # Automated sync polls Git again and finds the rollback there: nothing to undo.
    h.reader.mark_changed(h.remote.url)
    for _ in range(5):
        clock.advance(200)
        h.step("shop")
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"}
    assert h.status("shop")["sync"]["status"] == "Synced"
    assert h.status("shop")["history"][-1]["revision"] == str(tip.id)


def test_a_refused_rollback_leaves_git_as_it_was(tmp_path: Path, clock: VirtualClock) -> None:
    h = _automated_shop(tmp_path, clock)
    _release(h, {"app/all.yaml": manifests({**config_map("a"), "data": {"k": "bad"}})}, count=2)
    before = str(_tip(h).id)
    with pytest.raises(steering.AppCommandError, match="no history entry '7'"):
        _rollback(h, tmp_path, "7")
    app = h.app("shop")
    app["operation"] = {"sync": {}, "initiatedBy": {"username": "someone"}}
    h.store.update({k: v for k, v in app.items() if k != "status"}, field_manager="test")
    with pytest.raises(steering.AppCommandError, match="already has a requested operation"):
        _rollback(h, tmp_path, "0")
    assert str(_tip(h).id) == before


def test_a_chart_version_cannot_be_rolled_back_by_a_git_edit(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    chart = {"repoURL": "https://charts.example.com", "chart": "web", "targetRevision": "1.2.0"}
    app = {
        "apiVersion": APP_API_VERSION,
        "kind": "Application",
        "metadata": {"name": "shop", "namespace": APPS_NS},
        "spec": {"sources": [chart]},
        "status": {
            "sync": {"revisions": ["1.2.0"]},
            "history": [{"id": 0, "revisions": ["1.1.0"]}],
        },
    }
    branches = steering.git_branches(h.store, tmp_path / "rollback-cache")
    refusal = r"chart web .*: from 1\.2\.0 back to 1\.1\.0, .* cannot be rolled back by a Git edit"
    with pytest.raises(steering.AppCommandError, match=refusal):
        steering.request_rollback(h.store, app, who=WHO, wanted="0", open_branch=branches)


def _conditions(h: Harness) -> dict[str, str]:
    return {c["type"]: c["message"] for c in h.status("shop").get("conditions") or []}


def _offline_rollback(tmp_path: Path, clock: VirtualClock) -> Harness:
    """A bad release synced by automated sync, then a rollback to history 0 with the remote
    down: the cluster runs history 0 again while Git still says the bad release."""
    h = _automated_shop(tmp_path, clock)
    _release(h, {"app/all.yaml": manifests({**config_map("a"), "data": {"k": "bad"}})}, count=2)
    (tmp_path / "remote.git").rename(tmp_path / "gone.git")  # the remote is down
    h.reader.mark_changed(h.remote.url)  # the controller's next poll is due, and fails
    out = _rollback(h, tmp_path, "0", reason="bad k")
    assert "Git could not be written" in out and "pending" in out, out
    h.run("shop", lambda s: len(s.get("history") or []) == 3)
    return h


def _outbox(h: Harness, tmp_path: Path) -> RollbackOutbox:
    branches = steering.git_branches(h.store, tmp_path / "outbox-cache")
    return RollbackOutbox(h.store, h.clock, open_branch=branches)


def _rollback_commits(h: Harness) -> list[pygit2.Commit]:
    walk = h.remote.repo.walk(_tip(h).id)
    return [c for c in walk if "Headway-Rollback-To: " in c.message]


def test_with_git_unreachable_the_cluster_rolls_back_and_auto_sync_holds(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _offline_rollback(tmp_path, clock)
    first = h.status("shop")["history"][0]["revision"]
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"}
    assert h.status("shop")["history"][-1]["revision"] == first
    pending = read_pending(h.app("shop"))
    assert pending is not None and pending.to_revisions == (first,)
    clock.advance(200)  # a poll with the remote down still says why the app is diverged
    h.step("shop")
    assert "DivergedFromGit" in _conditions(h)
    # Git comes back still saying the bad release: automated sync does not re-apply it.
    (tmp_path / "gone.git").rename(tmp_path / "remote.git")
    for _ in range(5):
        h.reader.mark_changed(h.remote.url)
        clock.advance(200)
        h.step("shop")
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"}
    assert len(h.status("shop")["history"]) == 3
    assert "Git could not be written" in _conditions(h)["DivergedFromGit"]


def test_the_pending_commit_is_pushed_when_git_is_back_and_auto_sync_keeps_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _offline_rollback(tmp_path, clock)
    first = h.status("shop")["history"][0]["revision"]
    outbox = _outbox(h, tmp_path)
    key = ObjectKey(APPS_NS, "shop")
    retry = outbox.step(key)  # still down: kept, tried again later
    assert retry is not None and retry > 0
    assert read_pending(h.app("shop")) is not None
    (tmp_path / "gone.git").rename(tmp_path / "remote.git")
    assert outbox.step(key) is None
    assert read_pending(h.app("shop")) is None
    [commit] = _rollback_commits(h)
    assert commit.id == _tip(h).id and f"Headway-Rollback-To: {first}" in commit.message
    assert "Requested by headway-test: bad k." in commit.message
    for _ in range(5):
        h.reader.mark_changed(h.remote.url)
        clock.advance(200)
        h.step("shop")
    assert "DivergedFromGit" not in _conditions(h)
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"}
    assert h.status("shop")["sync"]["status"] == "Synced"


def test_a_push_interrupted_before_the_outbox_is_cleared_is_not_pushed_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _offline_rollback(tmp_path, clock)
    (tmp_path / "gone.git").rename(tmp_path / "remote.git")
    pending = read_pending(h.app("shop"))
    assert pending is not None
    # What a controller killed right after the push leaves: the commit and the entry.
    branches = steering.git_branches(h.store, tmp_path / "dead-controller-cache")
    write_rollback(pending.plan(h.app("shop")), open_branch=branches)
    assert len(_rollback_commits(h)) == 1
    assert _outbox(h, tmp_path).step(ObjectKey(APPS_NS, "shop")) is None
    assert len(_rollback_commits(h)) == 1
    assert ROLLBACK_PENDING_ANNOTATION not in (h.app("shop")["metadata"].get("annotations") or {})


def test_git_fixed_meanwhile_clears_the_entry_without_a_stale_commit(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _offline_rollback(tmp_path, clock)
    (tmp_path / "gone.git").rename(tmp_path / "remote.git")
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))}, "fix k by hand")
    fixed = str(_tip(h).id)
    assert _outbox(h, tmp_path).step(ObjectKey(APPS_NS, "shop")) is None
    assert str(_tip(h).id) == fixed and not _rollback_commits(h)
    assert read_pending(h.app("shop")) is None
