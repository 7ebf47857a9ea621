"""Kill trial: a real `headway serve` SIGKILLed again and again at random points while a bad
release committed to Git is canaried, judged on real traffic, aborted and reverted in Git.
Whatever the kill points: the bad revision never becomes stable (no promotion without a
passed run), Git gets exactly one revert of the bad commit (none lost, none doubled), and
the Application syncs it back to Healthy. The seed of the kill points is in the failure
message to replay it."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from e2e_rollouts.stage import API, FIRST_DEPLOY, IMAGE, Stage
from e2e_rollouts.test_git_convergence import (
    ARGOCD,
    DEFAULT_PROJECT,
    _application,
    _file_at,
    _files,
    _synced_to,
    _tip,
)
from e2e_sync.e2e_helpers import Remote, stop_gently

pytestmark = pytest.mark.slow

MAX_KILLS = 4


class Killer:
    """`headway serve` over the stage's state directory, SIGKILLed a random 0.5 to 3 s after
    each start, up to `MAX_KILLS` times; the last one started keeps running."""

    def __init__(
        self, state: Path, log: Path, rng: random.Random, where: Callable[[], str]
    ) -> None:
        self.state, self.log, self.rng, self.where = state, log, rng, where
        self.processes: list[subprocess.Popen[bytes]] = []
        self.landed: list[str] = []  # what `where()` said at each kill

    def start(self) -> subprocess.Popen[bytes]:
        command = [str(Path(sys.executable).parent / "headway"), "serve"]
        command += ["--state-dir", str(self.state), "--app-poll-seconds", "1"]
        with self.log.open("ab") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    async def serving(self, process: subprocess.Popen[bytes]) -> None:
        await Stage.until(
            lambda: f"(pid {process.pid}," in self.log.read_text(errors="replace")
            or process.poll() is not None,
            30,
            "headway serve up",
        )
        assert process.poll() is None, self.log.read_text(errors="replace")[-2000:]

    async def run(self, process: subprocess.Popen[bytes]) -> None:
        """Kill `process` (already serving), start the next, and so on."""
        while len(self.landed) < MAX_KILLS:
            await asyncio.sleep(self.rng.uniform(0.5, 3.0))
            self.landed.append(self.where())
            os.kill(process.pid, signal.SIGKILL)
            await asyncio.to_thread(process.wait, 10)
            process = self.start()
            await self.serving(process)

    def stop_all(self) -> None:
        for process in self.processes:
            stop_gently(process)


def _where(stage: Stage) -> str:
    status = stage.rollout_status()
    runs = [str((run.get("status") or {}).get("phase")) for run in stage.analysis_runs()]
    return f"{status.get('phase')} step {status.get('currentStepIndex')} runs {runs}"


async def test_serve_killed_at_random_points_of_an_aborted_release(tmp_path: Path) -> None:
    seed = random.randrange(2**32)
    remote = Remote(tmp_path / "remote.git")
    first = remote.commit(_files("v1", "info"), "web v1")
    (tmp_path / "state").mkdir()
    task: asyncio.Task[None] | None = None
    stage_now: list[Stage] = []
    killer = Killer(
        tmp_path / "state",
        tmp_path / "serve.log",
        random.Random(seed),
        lambda: _where(stage_now[0]),
    )
    try:
        async with Stage.open(
            tmp_path, loops=None, bad_tags="v2", before=[ARGOCD, DEFAULT_PROJECT]
        ) as stage:
            stage_now.append(stage)
            first_serve = killer.start()
            await killer.serving(first_serve)
            stage.apply(_application(remote.url))
            await stage.until(lambda: _synced_to(stage, first), 40, "v1 synced")
            await stage.until(
                lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy"
            )
            stable = stage.pod_hash_of()
            stage.send_traffic(str(await stage.until(stage.vs_address, 10, "the mesh address")))
            stables = stage.watch(stage.pod_hash_of, every=0.05)
            bad = remote.commit(_files("v2", "debug"), "web v2 and debug logging")
            task = asyncio.create_task(killer.run(first_serve))
            revert = await stage.until(
                lambda: str(_tip(remote).id) if str(_tip(remote).id) != bad else "",
                120,
                "the revert commit",
            )
            await stage.until(lambda: _synced_to(stage, revert), 60, "the revert synced")
            await stage.until(lambda: stage.rollout_phase() == "Healthy", 60, "back to Healthy")
            await task
            await stage.until(lambda: _synced_to(stage, revert), 30, "still synced after kills")
            tip = _tip(remote)
            assert str(tip.id) == revert and [str(p) for p in tip.parent_ids] == [bad]
            assert f"Headway-Revert-Of: {bad}" in tip.message
            assert f"{IMAGE}:v1" in _file_at(tip, "app/rollout.yaml")
            # Never promoted: the bad revision's run failed, so it was never stable.
            assert set(stables) == {stable}, stables
            phases = [run["status"]["phase"] for run in stage.analysis_runs()]
            assert phases == ["Failed"], phases
            # The last serve compares the app again after it starts (its first poll may still
            # see the comparison a killed one wrote mid-sync): Synced must come, not be there.
            try:
                await stage.until(lambda: _sync_status(stage) == "Synced", 30, "compared Synced")
            except AssertionError as err:
                raise AssertionError(f"{err}; out of sync: {_out_of_sync(stage)}") from None
    except AssertionError as err:
        tail = (tmp_path / "serve.log").read_text(errors="replace")[-3000:]
        raise AssertionError(
            f"{err}\nseed {seed}; killed at: {killer.landed}\n--- serve.log (tail) ---\n{tail}"
        ) from None
    finally:
        if task is not None and not task.done():
            task.cancel()
        killer.stop_all()


def _sync_status(stage: Stage) -> str:
    app = stage.cluster.get(API, "Application", "shop", "argocd")
    return str(((app.get("status") or {}).get("sync") or {}).get("status") or "")


def _out_of_sync(stage: Stage) -> list[str]:
    status = stage.cluster.get(API, "Application", "shop", "argocd").get("status") or {}
    return [
        f"{r.get('kind')}/{r.get('name')}: {r.get('status')}"
        for r in status.get("resources") or []
        if r.get("status") != "Synced"
    ] + [str(c.get("message")) for c in status.get("conditions") or []]
