"""Analysis controller: what one step costs beyond the store's own read and status write.

    .venv/bin/python bench/bench_analysis_step.py

Runs AnalysisRuns with 1, 3 and 10 metrics through the real controller and LocalCluster on a
virtual clock, with an in-process provider (so the network is not what is measured), and
prints milliseconds per step that measures every metric, per step with nothing due, and the
floor: the same store `get` + `patch_status` of an equally large status. The ratios are the
claim; they hold on any machine because all are measured in the same process.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    RecordedMeasurement,
    measured,
    unchanged,
)
from headway.providers.registry import ProviderRegistry

API, KIND, NS = "argoproj.io/v1alpha1", "AnalysisRun", "default"
RUNS = 40


class InstantProvider:
    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        return measured(
            request, result=[0.01], value="[0.01]", finished_at=self._clock.now(), query="q"
        )

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        return unchanged(measurement)

    terminate = resume

    async def garbage_collect(self, request: MeasurementRequest, limit: int) -> None:
        return None


def _run(name: str, metrics: int) -> dict[str, object]:
    return {
        "apiVersion": API,
        "kind": KIND,
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "metrics": [
                {
                    "name": f"m{i}",
                    "interval": "10s",
                    "count": 20,
                    "successCondition": "result[0] < 0.05",
                    "provider": {"plugin": {"instant": {}}},
                }
                for i in range(metrics)
            ]
        },
    }


async def _measure(cluster: LocalCluster, clock: VirtualClock, metrics: int) -> tuple[float, ...]:
    registry = ProviderRegistry({"plugin:instant": InstantProvider(clock)})
    controller = AnalysisController(providers=registry, clock=clock)
    names = [f"r{metrics}-{i}" for i in range(RUNS)]
    for name in names:
        cluster.create(_run(name, metrics))
    for _ in range(5):  # five measurements each, so the status has some history
        for name in names:
            await controller.step(cluster, NS, name, clock.now())
        clock.advance(10)
    start = time.perf_counter()
    for name in names:
        await controller.step(cluster, NS, name, clock.now())
    measuring = (time.perf_counter() - start) / RUNS
    start = time.perf_counter()
    for name in names:
        await controller.step(cluster, NS, name, clock.now())
    idle = (time.perf_counter() - start) / RUNS
    start = time.perf_counter()
    for name in names:
        obj = cluster.get(API, KIND, name, NS)
        status = dict(obj["status"], message=str(time.perf_counter()))
        cluster.patch_status(API, KIND, name, NS, status)
    floor = (time.perf_counter() - start) / RUNS
    return measuring, idle, floor


async def main() -> None:
    print(f"{'metrics':>7} {'measure':>9} {'idle':>8} {'floor':>8} {'measure/floor':>14}")
    with tempfile.TemporaryDirectory() as work:
        clock = VirtualClock()
        with LocalCluster(Path(work) / "bench.db", clock) as cluster:
            for metrics in (1, 3, 10):
                measuring, idle, floor = await _measure(cluster, clock, metrics)
                print(
                    f"{metrics:>7} {measuring * 1e3:>8.2f}m {idle * 1e3:>7.2f}m "
                    f"{floor * 1e3:>7.2f}m {measuring / floor:>13.1f}x"
                )


if __name__ == "__main__":
    asyncio.run(main())
