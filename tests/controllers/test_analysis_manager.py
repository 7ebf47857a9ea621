"""The analysis controller under the controller manager: woken by its watch and its requeues,
never by its own unchanged status (no busy loop)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from pathlib import Path

from analysis_fakes import NS, ScriptedProvider, analysis_run, metric

from headway.clock import EPOCH, VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.controllers.manager import Manager, ObjectKey
from headway.model.obj import Obj
from headway.providers.registry import ProviderRegistry


class CountingSteps:
    """The same shape `headway serve` registers, counting its steps."""

    name = "analysisruns"
    watches: Sequence[tuple[str, str]] = (("argoproj.io/v1alpha1", "AnalysisRun"),)

    def __init__(self, cluster: LocalCluster, clock: VirtualClock, provider: ScriptedProvider):
        self.cluster, self.clock, self.steps = cluster, clock, 0
        registry = ProviderRegistry({"plugin:fake": provider})
        self.controller = AnalysisController(providers=registry, clock=clock)

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["name"])]

    async def step(self, key: ObjectKey) -> float | None:
        self.steps += 1
        return await self.controller.step(self.cluster, key.namespace, key.name, self.clock.now())


async def test_steps_come_from_watch_events_and_requeues_only(
    tmp_path: Path, clock: VirtualClock
) -> None:
    provider = ScriptedProvider(clock, [[1], [1], [1]])
    with LocalCluster(tmp_path / "c.db", clock) as cluster:
        steps = CountingSteps(cluster, clock, provider)
        manager = Manager(cluster, clock, resync_seconds=3600)
        manager.register(steps)
        cluster.create(analysis_run(metric(interval="10s", count=3)))
        for _ in range(40):  # 40 virtual seconds, a pass every second
            await manager.run_once()
            await manager.run_once()
            clock.advance(1)
        run = cluster.get("argoproj.io/v1alpha1", "AnalysisRun", "run", NS)
    assert run["status"]["phase"] == "Successful"
    assert [t for t, _ in provider.runs] == [EPOCH + timedelta(seconds=s) for s in (0, 10, 20)]
    # Three due steps, each writing a status; each write wakes the watch once more, and that
    # step finds nothing due and writes nothing, so nothing wakes it again.
    assert steps.steps == 6
