"""A scripted metric provider and helpers to drive the analysis controller on a virtual clock."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from headway.analysis.measurement import MeasurementPhase
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.model.obj import Obj
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    RecordedMeasurement,
    decided,
    in_flight,
    measured,
    unreachable,
)
from headway.providers.registry import ProviderRegistry
from headway.providers.values import json_text

NS = "default"
UNREACHABLE = object()
ERROR = object()
PENDING_JOB = object()
RAISE = object()


@dataclass
class ScriptedProvider:
    """Answers each `run` with the next scripted result; records what it was asked and when."""

    clock: VirtualClock
    script: list[Any] = field(default_factory=list)
    runs: list[tuple[datetime, MeasurementRequest]] = field(default_factory=list)
    resumes: list[datetime] = field(default_factory=list)
    terminated: list[datetime] = field(default_factory=list)
    job_polls_before_done: int = 0
    gc_limits: list[int] = field(default_factory=list)

    def _answer(self, request: MeasurementRequest, item: Any) -> ProviderMeasurement:
        now = self.clock.now()
        if item is UNREACHABLE:
            return unreachable(request, "fake backend", "connection refused", finished_at=now)
        if item is ERROR:
            return decided(request, MeasurementPhase.ERROR, "bad query", finished_at=now)
        if item is RAISE:
            raise RuntimeError("provider bug")
        if item is PENDING_JOB:
            return in_flight(request, resume_at=now, metadata={"job-name": "j"})
        query = str((request.metric.provider.plugin or {}).get("fake", {}).get("query", ""))
        return measured(request, result=item, value=json_text(item), finished_at=now, query=query)

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        self.runs.append((self.clock.now(), request))
        return self._answer(request, self.script.pop(0))

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        self.resumes.append(self.clock.now())
        if len(self.resumes) <= self.job_polls_before_done:
            return in_flight(
                request,
                resume_at=self.clock.now() + timedelta(seconds=5),
                metadata=measurement.metadata,
            )
        return decided(
            request,
            MeasurementPhase.SUCCESSFUL,
            "job done",
            finished_at=self.clock.now(),
            metadata=measurement.metadata,
        )

    async def terminate(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        self.terminated.append(self.clock.now())
        return decided(
            request, MeasurementPhase.SUCCESSFUL, "metric terminated", finished_at=self.clock.now()
        )

    async def garbage_collect(self, request: MeasurementRequest, limit: int) -> None:
        self.gc_limits.append(limit)


def metric(name: str = "m", **fields: Any) -> dict[str, Any]:
    query = fields.pop("query", "fake_query")
    return {"name": name, "provider": {"plugin": {"fake": {"query": query}}}, **fields}


def analysis_run(*metrics: dict[str, Any], name: str = "run", **spec: Any) -> Obj:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"metrics": list(metrics), **spec},
    }


@dataclass
class Harness:
    clock: VirtualClock
    cluster: LocalCluster
    provider: ScriptedProvider

    def controller(self) -> AnalysisController:
        """A fresh controller each call: nothing is remembered between steps but the status."""
        registry = ProviderRegistry({"plugin:fake": self.provider})
        return AnalysisController(providers=registry, clock=self.clock)

    def create(self, run: Obj) -> None:
        self.cluster.create(run)

    async def step(self, name: str = "run") -> float | None:
        return await self.controller().step(self.cluster, NS, name, self.clock.now())

    def status(self, name: str = "run") -> dict[str, Any]:
        return dict(self.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", name, NS)["status"])

    def result(self, metric_name: str = "m", name: str = "run") -> dict[str, Any]:
        results = self.status(name)["metricResults"]
        return dict(next(r for r in results if r["name"] == metric_name))

    async def run_until_done(self, *, limit: int = 50) -> list[float]:
        """Step, advance by the requeue, repeat; the requeues taken, in order."""
        waits: list[float] = []
        for _ in range(limit):
            wait = await self.step()
            if wait is None:
                return waits
            waits.append(wait)
            self.clock.advance(wait)
        raise AssertionError("the run never ended")


def harness(tmp_path: Path, clock: VirtualClock, script: list[Any]) -> Generator[Harness]:
    with LocalCluster(tmp_path / "cluster.db", clock) as cluster:
        yield Harness(clock, cluster, ScriptedProvider(clock, list(script)))
