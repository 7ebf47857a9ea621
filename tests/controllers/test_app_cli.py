"""`headway app` against the store, with the controller run in-process between commands."""

from __future__ import annotations

from pathlib import Path

import pygit2
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
    message,
    phase,
)
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.controllers.app.operations import CONFIRM_PRUNE_ANNOTATION

_register_all()
runner = CliRunner()


def _cli(h: Harness, tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["app", *args, "--state-dir", str(tmp_path / "state")])
    return result.exit_code, result.output


def test_sync_writes_an_operation_the_controller_runs_and_records(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    code, out = _cli(h, tmp_path, "list")
    assert code == 0 and "shop" in out and "OutOfSync" in out
    code, out = _cli(h, tmp_path, "diff", "shop")
    assert code == 1
    assert "===== /ConfigMap demo/a ======" in out and "+data:" in out
    code, out = _cli(h, tmp_path, "sync", "shop")
    assert (code, out.strip()) == (0, "sync of shop requested")
    assert h.app("shop")["operation"]["initiatedBy"] == {"username": "headway-cli"}
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    assert "operation" not in h.app("shop")
    assert status["history"][-1]["initiatedBy"] == {"username": "headway-cli"}
    h.step("shop")
    code, out = _cli(h, tmp_path, "diff", "shop")
    assert (code, out) == (0, "")
    code, out = _cli(h, tmp_path, "history", "shop")
    assert code == 0 and "Succeeded" in out and "headway-cli" in out
    code, out = _cli(h, tmp_path, "get", "shop")
    assert "Sync Status:  Synced" in out and "ConfigMap" in out


def test_selective_sync_warns_that_hooks_do_not_run(tmp_path: Path, clock: VirtualClock) -> None:
    files = {"app/all.yaml": manifests(config_map("a"), config_map("b"), hook_job("m", "PreSync"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    code, out = _cli(h, tmp_path, "sync", "shop", "--resource", "ConfigMap/b")
    assert code == 0
    assert "warning: selective sync: hooks do not run" in out
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    assert status["history"][-1]["resources"] == [{"group": "", "kind": "ConfigMap", "name": "b"}]
    code, out = _cli(h, tmp_path, "history", "shop")
    assert "ConfigMap/b" in out
    code, out = _cli(h, tmp_path, "sync", "shop", "--resource", "ConfigMap/zzz")
    assert code == 2 and "is not a resource of this application" in out


def test_rollback_to_a_history_entry_commits_it_and_syncs_that_commit(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    _cli(h, tmp_path, "sync", "shop")
    first = h.run("shop", lambda s: phase(s) == "Succeeded")["history"][0]["revision"]
    h.remote.commit({"app/all.yaml": manifests({**config_map("a"), "data": {"k": "2"}})})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.step("shop")
    _cli(h, tmp_path, "sync", "shop")
    h.run("shop", lambda s: len(s.get("history") or []) == 2)
    assert h.get("ConfigMap", "a")["data"] == {"k": "2"}
    code, out = _cli(h, tmp_path, "rollback", "shop", "0", "--reason", "k=2 broke checkout")
    assert code == 0, out
    tip = h.remote.repo.references["refs/heads/main"].peel(pygit2.Commit)
    assert f"committed {str(tip.id)[:12]}" in out
    assert "Requested by headway-cli: k=2 broke checkout." in tip.message
    assert f"Headway-Rollback-To: {first}" in tip.message
    status = h.run("shop", lambda s: len(s.get("history") or []) == 3)
    assert status["history"][-1]["revision"] == str(tip.id)
    assert h.get("ConfigMap", "a")["data"] == {"k": "a"}, status["operationState"]
    code, out = _cli(h, tmp_path, "rollback", "shop", first[:8])  # a revision prefix
    assert code == 0, out
    assert "nothing committed" in out  # Git already says what history 0 said
    status = h.run("shop", lambda s: len(s.get("history") or []) == 4)
    assert status["history"][-1]["revision"] == str(tip.id)


def test_terminate_stops_a_waiting_operation(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(hook_job("m", "PreSync"))})
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    _cli(h, tmp_path, "sync", "shop")
    h.run("shop", lambda s: "waiting: Job/m" in message(s))
    code, out = _cli(h, tmp_path, "terminate", "shop")
    assert (code, out.strip()) == (0, "operation on shop is terminating")
    status = h.run("shop", lambda s: phase(s) == "Failed")
    assert message(status) == "Operation terminated"
    code, out = _cli(h, tmp_path, "terminate", "shop")
    assert code == 1 and "no operation is running" in out


def test_confirm_prune_with_nothing_waiting_sets_no_annotation(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    code, _ = _cli(h, tmp_path, "confirm-prune", "shop")
    assert code == 1
    annotations = h.store.get("argoproj.io/v1alpha1", "Application", "shop", APPS_NS)["metadata"]
    assert CONFIRM_PRUNE_ANNOTATION not in (annotations.get("annotations") or {})
    code, out = _cli(h, tmp_path, "get", "nope")
    assert code == 1 and "application argocd/nope not found" in out
