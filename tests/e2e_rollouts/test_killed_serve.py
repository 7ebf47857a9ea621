"""A real `headway serve` process SIGKILLed in the middle of a canary's analysis step; a new
process over the same store continues from the same step and adopts the same AnalysisRun
(same name and uid, its measurements kept) instead of starting another one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e_rollouts.manifests import (
    analysis_step,
    canary_mesh,
    rollout,
    routed_canary,
    template,
    traffic_metric,
)
from e2e_rollouts.stage import FIRST_DEPLOY, Stage
from e2e_sync.e2e_helpers import stop_gently

pytestmark = pytest.mark.slow

COUNT = 4
ERRORS = traffic_metric(
    "error-ratio",
    "error-ratio",
    "result[0] < 0.05",
    initialDelay="2s",
    interval="2s",
    count=COUNT,
    failureLimit=0,
)
STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    analysis_step("errors"),
    {"setWeight": 60},
    {"pause": {"duration": "1s"}},
]


class ServeProcesses:
    """`headway serve` processes over one state directory, stopped by pid at the end."""

    def __init__(self, state: Path, log: Path) -> None:
        self.state, self.log = state, log
        state.mkdir(parents=True, exist_ok=True)
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        command = [str(Path(sys.executable).parent / "headway"), "serve"]
        with self.log.open("ab") as out:
            process = subprocess.Popen(
                [*command, "--state-dir", str(self.state)], stdout=out, stderr=subprocess.STDOUT
            )
        self.started.append(process)
        return process

    def wait_serving(self, process: subprocess.Popen[bytes]) -> None:
        """Until the process printed `serving ... (pid N, ...)`: its controllers are built."""
        deadline = time.monotonic() + 30
        while f"(pid {process.pid}," not in self.log.read_text(errors="replace"):
            assert process.poll() is None, self.log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "headway serve did not start"
            time.sleep(0.1)

    def stop_all(self) -> None:
        for process in self.started:
            stop_gently(process)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeProcesses]:
    processes = ServeProcesses(tmp_path / "state", tmp_path / "serve.log")
    yield processes
    processes.stop_all()


def _measurements(run: dict[str, Any]) -> list[dict[str, Any]]:
    results = (run.get("status") or {}).get("metricResults") or [{}]
    return list(results[0].get("measurements") or [])


async def test_a_killed_serve_process_continues_from_the_same_step(
    tmp_path: Path, serve: ServeProcesses
) -> None:
    # Started before the runtime: the traffic metrics' default address (the runtime's
    # metricsAddress in runtime.json) is looked up when a measurement needs it.
    first = serve.start()
    serve.wait_serving(first)
    async with Stage.open(tmp_path, loops=None) as stage:
        stage.apply(template("errors", ERRORS), *canary_mesh(), rollout("v1", routed_canary(STEPS)))
        await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
        address = str(await stage.until(stage.vs_address, 10, "the mesh address"))
        stage.send_traffic(address)
        steps = stage.watch(lambda: stage.rollout_status().get("currentStepIndex"), every=0.05)
        stage.apply(rollout("v2", routed_canary(STEPS)))
        await stage.until(
            lambda: [r for r in stage.analysis_runs() if len(_measurements(r)) >= 1],
            30,
            "the analysis step's run measured once",
        )
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        (run,) = stage.analysis_runs()
        name, uid = run["metadata"]["name"], run["metadata"]["uid"]
        assert run["status"]["phase"] == "Running" and len(_measurements(run)) < COUNT
        assert stage.rollout_status()["currentStepIndex"] == 1
        serve.start()
        await stage.until(lambda: stage.rollout_phase() == "Healthy", 40, "v2 Healthy")
        (after,) = stage.analysis_runs()
        assert (after["metadata"]["name"], after["metadata"]["uid"]) == (name, uid)
        assert after["status"]["phase"] == "Successful"
        assert len(_measurements(after)) == COUNT  # continued, not measured again from zero
        assert {m["phase"] for m in _measurements(after)} == {"Successful"}, _measurements(after)
        assert steps[:5] == [4, 0, 1, 2, 3]  # v1's last step, then v2's in order, none repeated
        assert steps[1:] == sorted(steps[1:])  # never back to an earlier step
        assert stage.rollout_status()["currentStepIndex"] == len(STEPS)
