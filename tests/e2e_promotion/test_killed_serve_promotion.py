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
from pathlib import Path

import pytest

from e2e_promotion.promotion_stage import IMAGE, PromotionStage, pipeline, promotion_stage
from e2e_rollouts.test_killed_serve import ServeProcesses
from headway.promotion.record import read_spec

pytestmark = pytest.mark.slow


async def _kill_loop(serve: ServeProcesses, stop: asyncio.Event, kills: list[int]) -> None:
    current = serve.started[-1]
    while not stop.is_set():
        await asyncio.sleep(random.uniform(1.0, 3.0))
        os.kill(current.pid, signal.SIGKILL)
        await asyncio.to_thread(current.wait, 10)
        kills.append(current.pid)
        current = serve.start()
        await asyncio.to_thread(serve.wait_serving, current)


def _commits(stage: PromotionStage) -> list[str]:
    return [c.message for c in stage.log() if "Headway-Promotion:" in c.message]


async def test_a_walk_through_repeated_kills_commits_each_environment_once(
    tmp_path: Path,
) -> None:
    serve = ServeProcesses(tmp_path / "state", tmp_path / "serve.log")
    try:
        serve.wait_serving(serve.start())
        walk = pipeline(prod_timeout="10m")
        async with promotion_stage(tmp_path, walk, in_process=False) as stage:
            stop, kills = asyncio.Event(), list[int]()
            killer = asyncio.create_task(_kill_loop(serve, stop, kills))
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
