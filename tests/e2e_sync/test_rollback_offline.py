"""End to end on the local runtime with a real Git remote: `headway app rollback` under
automated sync writes a commit that automated sync keeps; with the remote unreachable
(renamed away) the cluster is rolled back all the same, the Application says it is diverged
from Git, and the `rollback-outbox` controller pushes the commit, once, when the remote is
back."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pygit2
import pytest

from e2e_rollouts.test_killed_serve import ServeProcesses
from e2e_sync.e2e_helpers import API, Remote, application, default_project, dump
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.runtime import Runtime
from headway.controllers import exit_points
from headway.engine import Engine, EngineSettings, Loop
from headway.steering import apps as steering
from polling import eventually

pytestmark = pytest.mark.slow


def _config(value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"},
            "data": {"release": value}}


@dataclass
class Stage:
    runtime: Runtime
    remote: Remote
    tmp_path: Path

    def app(self) -> dict[str, Any]:
        return self.runtime.cluster.get(API, "Application", "shop", "argocd")

    def status(self) -> dict[str, Any]:
        return dict(self.app().get("status") or {})

    def release(self) -> str:
        try:
            conf = self.runtime.cluster.get("v1", "ConfigMap", "conf", "default")
        except NotFound:
            return ""
        return str(conf["data"]["release"])

    def conditions(self) -> set[str]:
        return {str(c["type"]) for c in self.status().get("conditions") or []}

    def rollback_commits(self, where: str = "remote.git") -> list[pygit2.Commit]:
        repo = pygit2.Repository(str(self.tmp_path / where))
        tip = repo.references["refs/heads/main"].target
        return [c for c in repo.walk(tip) if "Headway-Rollback-To: " in c.message]

    def rollback(self, wanted: str) -> str:
        branches = steering.git_branches(self.runtime.cluster, self.tmp_path / "cli-cache")
        return steering.request_rollback(
            self.runtime.cluster, self.app(), who="headway-cli", wanted=wanted,
            open_branch=branches, reason="v2 is bad",
        )


@contextlib.asynccontextmanager
async def _running(tmp_path: Path, *, in_process: bool = True) -> AsyncIterator[Stage]:
    """The runtime, with the controllers in this process or (`in_process=False`) left to
    `headway serve` processes the test starts over the same state directory."""
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/all.yaml": dump(_config("v1"))}, "v1")
    app = application("shop", remote.url, automated={"prune": True})
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    loops = frozenset({Loop.APPLICATIONS, Loop.GIT_CONVERGENCE})
    settings = EngineSettings(state_dir=tmp_path / "state", loops=loops,
                              app_poll_seconds=1.0, resync_seconds=1.0)
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    for obj in ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                default_project(), app):
        runtime.cluster.apply(obj, field_manager="test")
    stop_runtime, stop_engine = asyncio.Event(), asyncio.Event()
    running = asyncio.create_task(runtime.run(stop_runtime))
    serving = asyncio.create_task(engine.run(stop_engine) if in_process else stop_engine.wait())
    try:
        yield Stage(runtime, remote, tmp_path)
    finally:
        stop_engine.set()  # the engine first: it reads the runtime's store until it stops
        await asyncio.wait_for(serving, timeout=20)
        stop_runtime.set()
        await asyncio.wait_for(running, timeout=20)
        await http.aclose()


async def _polled_twice_more(stage: Stage) -> None:
    """Until the controller has compared the app twice more, polling Git each time (the
    poll interval is 1 s): what automated sync would do, it has had the chance to."""
    for _ in range(2):
        before = stage.status().get("reconciledAt")
        await eventually(lambda b=before: stage.status().get("reconciledAt") != b, timeout=30,
                         what="another comparison")


async def _bad_release(stage: Stage) -> None:
    await eventually(lambda: stage.release() == "v1", timeout=60, what="v1 synced")
    stage.remote.commit({"app/all.yaml": dump(_config("v2"))}, "v2")
    await eventually(lambda: len(stage.status().get("history") or []) == 2, timeout=60,
                     what="automated sync of v2")
    assert stage.release() == "v2"


async def test_a_rollback_is_a_commit_that_automated_sync_keeps(tmp_path: Path) -> None:
    async with _running(tmp_path) as stage:
        await _bad_release(stage)
        out = stage.rollback("0")
        assert "committed" in out, out
        await eventually(lambda: stage.release() == "v1", timeout=60, what="rolled back")
        [commit] = stage.rollback_commits()
        synced = lambda: stage.status()["history"][-1]["revision"] == str(commit.id)  # noqa: E731
        await eventually(synced, timeout=60, what="the rollback commit synced")
        await _polled_twice_more(stage)  # polls of Git: nothing moves the app forward again
        assert stage.release() == "v1" and len(stage.status()["history"]) == 3


async def test_with_the_remote_down_the_cluster_rolls_back_and_the_commit_follows(
    tmp_path: Path,
) -> None:
    async with _running(tmp_path) as stage:
        await _bad_release(stage)
        (tmp_path / "remote.git").rename(tmp_path / "down.git")
        out = stage.rollback("0")
        assert "Git could not be written" in out, out
        await eventually(lambda: stage.release() == "v1", timeout=60,
                         what="rolled back with Git down")
        await eventually(lambda: "DivergedFromGit" in stage.conditions(), timeout=60,
                         what="the app says it is diverged from Git")
        assert stage.rollback_commits("down.git") == []
        (tmp_path / "down.git").rename(tmp_path / "remote.git")
        await eventually(lambda: len(stage.rollback_commits()) == 1, timeout=90,
                         what="the rollback commit pushed once Git is back")
        await eventually(lambda: "DivergedFromGit" not in stage.conditions(), timeout=60,
                         what="the mark removed")
        await _polled_twice_more(stage)  # automated sync polls again: v1 stays, one commit
        assert stage.release() == "v1" and len(stage.rollback_commits()) == 1
        assert stage.status()["sync"]["status"] == "Synced"


def _serve(tmp_path: Path, **env: str) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "headway"), "serve", "--state-dir",
               str(tmp_path / "state"), "--app-poll-seconds", "1"]
    with (tmp_path / "serve.log").open("ab") as out:
        return subprocess.Popen(command, env={**os.environ, **env}, stdout=out,
                                stderr=subprocess.STDOUT)


async def test_serve_killed_between_the_push_and_clearing_the_outbox_pushes_once(
    tmp_path: Path,
) -> None:
    """The window opened on purpose: `serve` exits right after the rollback commit is pushed,
    before the outbox entry is removed; the next process finds Git already restored."""
    serve = ServeProcesses(tmp_path / "state", tmp_path / "serve.log")
    first = _serve(tmp_path, **{exit_points.ENV: "rollback-pushed"})
    serve.started.append(first)
    try:
        async with _running(tmp_path, in_process=False) as stage:
            await _bad_release(stage)
            (tmp_path / "remote.git").rename(tmp_path / "down.git")
            assert "Git could not be written" in stage.rollback("0")
            await eventually(lambda: stage.release() == "v1", timeout=60,
                             what="rolled back with Git down")
            (tmp_path / "down.git").rename(tmp_path / "remote.git")
            assert await asyncio.to_thread(first.wait, 90) == 137  # killed right after the push
            assert len(stage.rollback_commits()) == 1
            assert "headway.dev/rollback-pending" in stage.app()["metadata"]["annotations"]
            serve.started.append(_serve(tmp_path))
            await eventually(
                lambda: "headway.dev/rollback-pending"
                not in (stage.app()["metadata"].get("annotations") or {}),
                timeout=60, what="the outbox entry cleared by the next process",
            )
            await _polled_twice_more(stage)
            assert len(stage.rollback_commits()) == 1 and stage.release() == "v1"
    finally:
        serve.stop_all()
