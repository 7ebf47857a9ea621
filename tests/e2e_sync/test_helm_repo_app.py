"""End to end on the local runtime: an Application in Argo CD's multi-source Helm shape (a
chart from a Helm repository, its values file from Git through `$values`) syncs Healthy;
a new chart version matching `targetRevision` is picked up and recorded as the revision;
with the chart repository stopped the app says so, keeps what it runs, and a sync back to the
previously synced chart version works from the chart cache."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from e2e_sync.e2e_helpers import API, Remote, default_project
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from headway.steering import apps as steering
from polling import eventually
from source.helm_repo_server import ChartRepoServer, chart_archive

pytestmark = pytest.mark.slow


FIXTURE = Path(__file__).parent / "fixtures" / "helm_multi_source_app.yaml"


def _application(charts_url: str, values_url: str) -> dict[str, Any]:
    """Argo CD's documented multi-source example, in its shape (the fixture): the chart from
    the chart repository, a values file from a Git repository named by its `ref`."""
    text = FIXTURE.read_text().replace("CHARTS_URL", charts_url)
    loaded: dict[str, Any] = yaml.safe_load(text.replace("VALUES_URL", values_url))
    return loaded


@dataclass
class Stage:
    runtime: Runtime
    charts: ChartRepoServer

    def app(self) -> dict[str, Any]:
        return self.runtime.cluster.get(API, "Application", "web", "argocd")

    def status(self) -> dict[str, Any]:
        return dict(self.app().get("status") or {})

    def config(self) -> dict[str, str]:
        try:
            conf = self.runtime.cluster.get("v1", "ConfigMap", "web-conf", "default")
        except NotFound:
            return {}
        return dict(conf["data"])

    def conditions(self) -> list[dict[str, Any]]:
        return list(self.status().get("conditions") or [])


@contextlib.asynccontextmanager
async def _running(tmp_path: Path) -> AsyncIterator[Stage]:
    charts = ChartRepoServer()
    charts.publish(chart_archive("web", "1.0.0"))
    values = Remote(tmp_path / "values.git")
    values.commit({"envs/prod/web-values.yaml": "region: us-east-1\n"}, "prod values")
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    settings = EngineSettings(state_dir=tmp_path / "state", loops=frozenset({Loop.APPLICATIONS}),
                              app_poll_seconds=1.0, resync_seconds=1.0)
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    for obj in ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                default_project(), _application(charts.url, values.url)):
        runtime.cluster.apply(obj, field_manager="test")
    stop_runtime, stop_engine = asyncio.Event(), asyncio.Event()
    running = asyncio.create_task(runtime.run(stop_runtime))
    serving = asyncio.create_task(engine.run(stop_engine))
    try:
        yield Stage(runtime, charts)
    finally:
        stop_engine.set()
        await asyncio.wait_for(serving, timeout=20)
        stop_runtime.set()
        await asyncio.wait_for(running, timeout=20)
        await http.aclose()
        charts.stop()


async def test_a_helm_repository_chart_syncs_upgrades_and_rolls_back_offline(
    tmp_path: Path,
) -> None:
    async with _running(tmp_path) as stage:
        await eventually(lambda: stage.config().get("chartVersion") == "1.0.0", timeout=60,
                         what="chart 1.0.0 synced")
        assert stage.config()["region"] == "us-east-1"  # the values file from Git
        await eventually(lambda: stage.status().get("health", {}).get("status") == "Healthy",
                         timeout=60, what="Healthy")
        assert stage.status()["sync"]["revisions"][0] == "1.0.0"

        stage.charts.publish(chart_archive("web", "1.1.0"))
        stage.charts.publish(chart_archive("web", "2.0.0"))  # outside `1.*`
        await eventually(lambda: stage.config().get("chartVersion") == "1.1.0", timeout=60,
                         what="chart 1.1.0 picked up")
        await eventually(lambda: stage.status()["history"][-1]["revisions"][0] == "1.1.0",
                         timeout=60, what="1.1.0 recorded as the revision")

        stage.charts.stop()
        down = lambda: any(  # noqa: E731
            c["type"] == "ComparisonError" and "chart 'web' from Helm repository" in c["message"]
            and stage.charts.url in c["message"] for c in stage.conditions()
        )
        await eventually(down, timeout=60, what="the unreachable repository reported")
        assert stage.config()["chartVersion"] == "1.1.0"  # kept: nothing pruned

        first = stage.status()["history"][0]
        assert first["revisions"][0] == "1.0.0"
        app = stage.app()
        app["spec"]["syncPolicy"] = {}  # a rollback is a manual sync, as in Argo CD
        stage.runtime.cluster.update({k: v for k, v in app.items() if k != "status"},
                                     field_manager="test")
        steering.request_sync(stage.runtime.cluster, stage.app(), who="test",
                              revisions=first["revisions"])
        await eventually(lambda: stage.config().get("chartVersion") == "1.0.0", timeout=60,
                         what="rolled back to 1.0.0 from the chart cache")
        assert stage.config()["region"] == "us-east-1"
