"""End to end on the local runtime, in the shape of argocd-example-apps' `helm-dependency`
(commit 0d521c6): an umbrella chart in Git with no templates of its own, whose Chart.yaml
declares its one dependency from a Helm repository by a version range and whose values set
the dependency's values. The repository wants basic auth, which a `type: helm` repository
Secret gives. The controller fetches the dependency as `helm dependency build` would and the
app syncs the subchart's objects under its alias."""

from __future__ import annotations

import asyncio
import base64
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
from polling import eventually
from source.helm_repo_server import ChartRepoServer, chart_archive

pytestmark = pytest.mark.slow

SUBCHART_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
data:
  chartVersion: {{ .Chart.Version | quote }}
  greeting: {{ .Values.greeting | quote }}
"""


def _umbrella(charts_url: str) -> dict[str, str]:
    chart = {
        "apiVersion": "v2",
        "name": "storefront",
        "version": "0.1.0",
        "dependencies": [
            {"name": "kv", "version": "~1.2.0", "repository": charts_url, "alias": "sessions"}
        ],
    }
    return {
        "helm-dependency/Chart.yaml": yaml.safe_dump(chart),
        "helm-dependency/values.yaml": "sessions:\n  greeting: from-the-umbrella\n",
    }


def _objects(git_url: str, charts_url: str) -> list[dict[str, Any]]:
    secret_data = {"type": "helm", "url": charts_url, "username": "reader", "password": "s3cret"}
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "charts",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"},
        },
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in secret_data.items()},
    }
    app = {
        "apiVersion": API,
        "kind": "Application",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": git_url, "targetRevision": "main", "path": "helm-dependency"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
            "syncPolicy": {"automated": {"prune": True}},
        },
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    return [namespace, default_project(), secret, app]


async def test_an_umbrella_chart_gets_its_dependency_from_an_authenticated_repository(
    tmp_path: Path,
) -> None:
    charts = ChartRepoServer(username="reader", password="s3cret")
    for version in ("1.2.0", "1.2.3", "1.3.0"):
        archive = chart_archive(
            "kv", version, values={"greeting": "default"}, templates={"cm.yaml": SUBCHART_CONFIGMAP}
        )
        charts.publish(archive)
    git = Remote(tmp_path / "apps.git")
    git.commit(_umbrella(charts.url), "umbrella chart")
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    settings = EngineSettings(
        state_dir=tmp_path / "state",
        loops=frozenset({Loop.APPLICATIONS}),
        app_poll_seconds=1.0,
        resync_seconds=1.0,
    )
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    for obj in _objects(git.url, charts.url):
        runtime.cluster.apply(obj, field_manager="test")
    stop_runtime, stop_engine = asyncio.Event(), asyncio.Event()
    running = asyncio.create_task(runtime.run(stop_runtime))
    serving = asyncio.create_task(engine.run(stop_engine))

    def synced() -> dict[str, str]:
        try:
            conf = runtime.cluster.get("v1", "ConfigMap", "web-sessions", "default")
        except NotFound:
            return {}
        return dict(conf["data"])

    try:
        await eventually(lambda: synced() != {}, timeout=60, what="the subchart's ConfigMap")
        # ~1.2.0 resolved from the index to 1.2.3; the umbrella's values reach the alias.
        assert synced() == {"chartVersion": "1.2.3", "greeting": "from-the-umbrella"}
        token = base64.b64encode(b"reader:s3cret").decode()
        assert ("/charts/kv-1.2.3.tgz", f"Basic {token}") in charts.requests
    finally:
        stop_engine.set()
        await asyncio.wait_for(serving, timeout=20)
        stop_runtime.set()
        await asyncio.wait_for(running, timeout=20)
        await http.aclose()
        charts.stop()
