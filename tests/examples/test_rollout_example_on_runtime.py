"""The `argo_rollouts/canary` fixture (argo-rollouts' rollout-canary.yaml) on the local runtime,
applied unchanged with an image map as the only addition: a new image stops at the first,
untimed pause with one canary pod of four (weight 25, no router), as Argo Rollouts does."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from polling import eventually

pytestmark = pytest.mark.slow

API = "argoproj.io/v1alpha1"
CANARY = Path(__file__).resolve().parent / "argo_rollouts" / "canary" / "rollout.yaml"


def _status(runtime: Runtime) -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Rollout", "shop-canary", "default").get("status") or {})


def _paused_at_first_step(runtime: Runtime) -> bool:
    status = _status(runtime)
    return status.get("currentStepIndex") == 1 and bool(status.get("pauseConditions"))


def _ready_by_image(runtime: Runtime) -> dict[str, int]:
    ready: dict[str, int] = {}
    for replica_set in runtime.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
        image = replica_set["spec"]["template"]["spec"]["containers"][0]["image"]
        ready[image] = int((replica_set.get("status") or {}).get("readyReplicas") or 0)
    return ready


async def test_the_canary_example_pauses_at_its_first_step(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(f'images:\n  "example/*":\n    command: ["{sleep}", "3600"]\n')
    clock = SystemClock()
    runtime = Runtime(
        state_dir=tmp_path / "state", clock=clock, config_path=config, shutdown_grace_seconds=2.0
    )
    settings = EngineSettings(state_dir=tmp_path / "state", loops=frozenset({Loop.ROLLOUTS}))
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    rollout = yaml.safe_load(CANARY.read_text())
    runtime.cluster.apply(rollout, field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        await eventually(
            lambda: _status(runtime).get("phase") == "Healthy", timeout=60, what="v1 Healthy"
        )
        container = rollout["spec"]["template"]["spec"]["containers"][0]
        container["image"] = "example/shop:v2"
        runtime.cluster.apply(rollout, field_manager="test")
        await eventually(
            lambda: _paused_at_first_step(runtime), timeout=60, what="paused at step 1"
        )
        await eventually(
            lambda: _ready_by_image(runtime) == {"example/shop:v1": 3, "example/shop:v2": 1},
            timeout=60,
            what="3 stable and 1 canary pod ready",
        )
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await http.aclose()
