"""Building metric views and requests for provider tests, and running a whole AnalysisRun."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

from headway.clock import Clock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.model import schema as s
from headway.model.analysis import METRIC, Metric
from headway.providers.protocol import MeasurementRequest, RunRef
from headway.providers.registry import default_registry


def metric_view(raw: dict[str, Any]) -> Metric:
    view = s.build_view(METRIC, raw)
    assert isinstance(view, Metric)
    return view


def request_for(raw: dict[str, Any], clock: Clock) -> MeasurementRequest:
    return MeasurementRequest(
        run=RunRef("run", "default", "uid-1"), metric=metric_view(raw), started_at=clock.now()
    )


def analysis_run(*metrics: dict[str, Any], name: str = "run", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"metrics": list(metrics), **spec},
    }


class RunDriver:
    """An AnalysisRun in a temporary LocalCluster, stepped by the real controller."""

    def __init__(self, tmp_path: Path, clock: Clock, client: httpx2.AsyncClient) -> None:
        self.clock = clock
        self.cluster = LocalCluster(tmp_path / "analysis.db", clock)
        self.controller = AnalysisController(providers=default_registry(client, clock), clock=clock)

    async def step(self, name: str = "run") -> float | None:
        return await self.controller.step(self.cluster, "default", name, self.clock.now())

    def status(self, name: str = "run") -> dict[str, Any]:
        run = self.cluster.get("argoproj.io/v1alpha1", "AnalysisRun", name, "default")
        return dict(run.get("status") or {})

    def measurements(self, name: str = "run", metric: str | None = None) -> list[dict[str, Any]]:
        results = self.status(name).get("metricResults") or []
        chosen = [r for r in results if metric is None or r["name"] == metric]
        return [m for r in chosen for m in r["measurements"]]

    def close(self) -> None:
        self.cluster.close()
