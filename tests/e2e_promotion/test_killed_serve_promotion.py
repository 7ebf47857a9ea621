"""`headway serve` SIGKILLed again and again while a release walks dev -> staging -> prod: each
new process resumes from the promotions' status and Git, so every environment gets exactly one
promotion commit, none is reverted, each environment one promotion, and the prod approval
given between two kills is kept.

Where the kills land is not chosen here (the loop kills a serving process every 1-3 s); the
deterministic cases, a kill before, during and after each action, are
tests/promotion/test_promotion_controller.py's."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_promotion.promotion_stage import IMAGE, PromotionStage, pipeline, promotion_stage
from e2e_rollouts.test_killed_serve import ServeProcesses
from headway.controllers import exit_points
from headway.promotion.record import read_spec

pytestmark = pytest.mark.slow


async def _kill_loop(
    serve: ServeProcesses, stop: asyncio.Event, kills: list[int], rng: random.Random
) -> None:
    """Kill the serving process 1-3 s (plus what its own start-up took) after it serves.

    The start-up term keeps the share of each life spent working the same on a loaded
    machine: with a fixed 1-3 s, a process that took 5 s to start was killed before it had
    synced much, and the walk crawled past the test's timeout (2 of 2 whole-suite runs at
    load 9; 160 s when run alone)."""
    current, started_in = serve.started[-1], 0.0
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(1.0, 3.0) + started_in)
        os.kill(current.pid, signal.SIGKILL)
        await asyncio.to_thread(current.wait, 10)
        kills.append(current.pid)
        began = loop.time()
        current = serve.start()
        await asyncio.to_thread(serve.wait_serving, current)
        started_in = loop.time() - began


def _commits(stage: PromotionStage) -> list[str]:
    return [c.message for c in stage.log() if "Headway-Promotion:" in c.message]


@pytest.mark.timeout(720)  # past the walk's own deadlines, so theirs report the promotions
async def test_a_walk_through_repeated_kills_commits_each_environment_once(
    tmp_path: Path,
) -> None:
    serve = ServeProcesses(tmp_path / "state", tmp_path / "serve.log")
    try:
        serve.wait_serving(serve.start())
        walk = pipeline(prod_timeout="10m")
        async with promotion_stage(tmp_path, walk, in_process=False) as stage:
            stop, kills = asyncio.Event(), list[int]()
            seed = random.randrange(2**32)
            print(f"kill loop seed {seed}")  # shown with a failure, so it replays
            killer = asyncio.create_task(_kill_loop(serve, stop, kills, random.Random(seed)))
            try:
                stage.cli("promote", "web", "--to", "dev", "--image", "v2", "--as", "dev")
                prod = await stage.until_phase(
                    lambda: stage.newest("prod", "v2"), "AwaitingApproval", 300, "v2 at prod"
                )
                stage.cli("approve", prod, "--as", "lead")
                await stage.until_phase(lambda: prod, "Succeeded", 300, "v2 live in prod")
            finally:
                stop.set()
                await killer
            assert len(kills) >= 3, kills  # the walk really went through restarts
            messages = _commits(stage)
            assert len(messages) == 3, messages  # one commit per environment, no revert
            assert all("Headway-Revert-Of" not in m for m in messages)
            assert sorted(read_spec(p).environment for p in stage.promotions()) == [
                "dev", "prod", "staging"
            ]
            assert stage.status(prod)["approval"]["decidedBy"] == "lead"
            assert stage.pinned("prod") == f"{IMAGE}:v2"
    finally:
        serve.stop_all()


async def test_serve_exiting_between_the_commit_and_its_record_commits_once(
    tmp_path: Path,
) -> None:
    """The narrow window opened on purpose: `serve` exits right after the dev commit, before
    the promotion's status says so; the next process finds the commit by its trailer."""
    serve = ServeProcesses(tmp_path / "state", tmp_path / "serve.log")
    env = {**os.environ, exit_points.ENV: "promotion-commit-done"}
    command = [str(Path(sys.executable).parent / "headway"), "serve", "--state-dir",
               str(tmp_path / "state")]
    try:
        with (tmp_path / "serve.log").open("ab") as out:
            first = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        serve.started.append(first)
        async with promotion_stage(tmp_path, pipeline(), in_process=False) as stage:
            # v1 is synced by this first process: it exits only at a promotion commit.
            stage.cli("promote", "web", "--to", "dev", "--image", "v2", "--as", "dev")
            assert await asyncio.to_thread(first.wait, 60) == 137
            dev = stage.newest("dev", "v2")
            assert "commit" not in stage.status(dev)  # committed, not recorded
            assert len(_commits(stage)) == 1
            serve.wait_serving(serve.start())
            await stage.until_phase(lambda: dev, "Succeeded", 120, "v2 live in dev")
            dev_commits = [
                c for c in stage.log()
                if "Headway-Environment: dev" in c.message and "Headway-Promotion:" in c.message
            ]
            assert [str(c.id) for c in dev_commits] == [stage.status(dev)["commit"]]
    finally:
        serve.stop_all()
