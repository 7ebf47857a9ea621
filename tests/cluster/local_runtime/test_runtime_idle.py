"""An idle runtime sleeps: it steps only when woken, when the store moved, or when a step
asked for a time, and hears container exits instead of polling for them.

The loop runs on a virtual clock here, so "time passed and nothing was due" is exact; the
tests wait on the loop's own turn counter (it looks whether a step is due every 0.1 s of
real time) rather than on any duration.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from headway.clock import VirtualClock
from headway.cluster.local.runtime import (
    FAILED_STEP_RETRY_SECONDS,
    SAFETY_RESYNC_SECONDS,
    Runtime,
    next_step_in,
)
from headway.model.obj import Obj
from polling import eventually

LOOK_TURNS = 5  # loop turns a test lets pass to see that no step came


def test_the_next_step_comes_at_the_earliest_requeue_capped_by_the_safety_resync() -> None:
    assert next_step_in(None, failed=False, resync=10.0) == 10.0
    assert next_step_in(3.0, failed=False, resync=10.0) == 3.0
    assert next_step_in(600.0, failed=False, resync=10.0) == 10.0
    assert next_step_in(None, failed=True, resync=10.0) == FAILED_STEP_RETRY_SECONDS
    assert next_step_in(0.0, failed=False, resync=10.0) > 0  # a 0 s requeue cannot spin


@contextlib.asynccontextmanager
async def _looping(runtime: Runtime) -> AsyncIterator[asyncio.Event]:
    stop, started = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(runtime.run(stop, ready=started.set))
    await asyncio.wait_for(started.wait(), timeout=60)
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=30)


async def _turns_pass(runtime: Runtime, turns: int = LOOK_TURNS) -> None:
    target = runtime.loop_turns + turns
    await eventually(lambda: runtime.loop_turns >= target, what=f"{turns} loop turns")


async def test_with_nothing_announced_the_loop_steps_only_at_the_requeue_and_the_resync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=tmp_path / "none")
    requeues: list[float | None] = [3.0, None, None]
    at: list[float] = []

    async def counted_step() -> float | None:
        at.append(clock.monotonic())
        return requeues[len(at) - 1] if len(at) <= len(requeues) else None

    monkeypatch.setattr(runtime, "step", counted_step)
    async with _looping(runtime):
        await eventually(lambda: at == [0.0], what="the first step")
        clock.advance(2.9)
        await _turns_pass(runtime)
        assert at == [0.0]  # the 3 s it asked for have not passed
        clock.advance(0.1)
        await eventually(lambda: len(at) == 2, what="the step the requeue asked for")
        clock.advance(SAFETY_RESYNC_SECONDS - 0.5)
        await _turns_pass(runtime)
        assert at == [0.0, 3.0]  # nothing due, nothing woke it: no step
        clock.advance(0.5)
        await eventually(lambda: len(at) == 3, what="the safety resync")
    assert at == [0.0, 3.0, 3.0 + SAFETY_RESYNC_SECONDS]


def _frozen_clock() -> VirtualClock:
    """Time that stands while the Pods run (nothing here sleeps on the clock: no probes,
    no stops) and moves by itself once shutdown stops them (SIGTERM, then a wait)."""
    return VirtualClock(auto_advance=True)


def _pod(name: str, *, seconds: str, policy: str = "Never") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "restartPolicy": policy,
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "main", "image": "idle/sleep", "args": [seconds]}],
        },
    }


def _sleep_config(tmp_path: Path) -> Path:
    config = tmp_path / "headway-runtime.yaml"
    script = "import sys, time; time.sleep(float(sys.argv[1]))"
    config.write_text(
        f"images:\n  idle/sleep:\n    command: [{sys.executable!r}, '-c', {script!r}]\n"
    )
    return config


def _phase(runtime: Runtime, name: str) -> str:
    pod = runtime.cluster.get("v1", "Pod", name, "default")
    return str((pod.get("status") or {}).get("phase") or "")


async def test_running_pods_with_nothing_changing_cost_no_step(tmp_path: Path) -> None:
    clock = _frozen_clock()  # no time-driven step can come
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=_sleep_config(tmp_path))
    async with _looping(runtime):
        for index in range(5):
            runtime.cluster.apply(_pod(f"idle-{index}", seconds="600"), field_manager="test")
        await eventually(
            lambda: all(_phase(runtime, f"idle-{i}") == "Running" for i in range(5)),
            what="five Pods Running",
        )
        await _turns_pass(runtime)  # the last status write's echo step
        steps = runtime.steps
        await _turns_pass(runtime, 3 * LOOK_TURNS)
        assert runtime.steps == steps


async def test_a_container_exit_is_heard_without_any_time_passing(tmp_path: Path) -> None:
    clock = _frozen_clock()  # only the exit itself can make the runtime look again
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=_sleep_config(tmp_path))
    async with _looping(runtime):
        runtime.cluster.apply(_pod("short", seconds="0.5"), field_manager="test")
        await eventually(lambda: _phase(runtime, "short") == "Succeeded", what="Succeeded")
        assert clock.monotonic() == 0.0


async def test_what_a_step_wrote_itself_reaches_the_parts_that_ran_before_it(
    tmp_path: Path,
) -> None:
    """The kubelet writes a Pod's readiness after the ReplicaSet and Deployment controllers
    ran in that step; the loop steps again for it, though no time passes and no one wakes it."""
    clock = _frozen_clock()
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=_sleep_config(tmp_path))
    template = _pod("unused", seconds="600", policy="Always")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
        },
    }

    def available_reason() -> str:
        status = runtime.cluster.get("apps/v1", "Deployment", "web", "default").get("status")
        conditions = (status or {}).get("conditions") or []
        return next((c["reason"] for c in conditions if c["type"] == "Progressing"), "")

    async with _looping(runtime):
        runtime.cluster.apply(deployment, field_manager="test")
        await eventually(
            lambda: available_reason() == "NewReplicaSetAvailable",
            what="the Deployment seeing its Pods ready",
        )
        assert clock.monotonic() == 0.0


async def test_a_store_change_visits_only_the_pods_it_touched(tmp_path: Path) -> None:
    """Five settled Pods, then a sixth: the passes that start it look at it alone."""
    clock = _frozen_clock()
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=_sleep_config(tmp_path))
    async with _looping(runtime):
        for index in range(5):
            runtime.cluster.apply(_pod(f"idle-{index}", seconds="600"), field_manager="test")
        await eventually(
            lambda: all(_phase(runtime, f"idle-{i}") == "Running" for i in range(5)),
            what="five Pods Running",
        )
        await _turns_pass(runtime)
        visits, steps = runtime.kubelet.pod_visits, runtime.steps
        runtime.cluster.apply(_pod("newcomer", seconds="600"), field_manager="test")
        await eventually(lambda: _phase(runtime, "newcomer") == "Running", what="Running")
        await _turns_pass(runtime)
        assert runtime.steps > steps
        assert runtime.kubelet.pod_visits - visits <= runtime.steps - steps
