"""The sync scenario with the engine on the Kubernetes backend: the controllers reach the
local runtime only through its Kubernetes API (lightkube's configuration, HTTP, watches),
as `headway serve --kubeconfig` does, while the runtime runs the Pods and Jobs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_sync.e2e_helpers import (
    API,
    Remote,
    application,
    default_project,
    dump,
    python_job,
    web_deployment,
)
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from polling import eventually

pytestmark = pytest.mark.slow

SETTINGS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
    "data": {"a": "1"},
}
MIGRATE = python_job("migrate", "print('migrated')", {
    "argocd.argoproj.io/hook": "PreSync",
    "argocd.argoproj.io/hook-delete-policy": "HookSucceeded",
})


def _op(runtime: Runtime) -> dict[str, Any]:
    app = runtime.cluster.get(API, "Application", "shop", "argocd")
    return dict((app.get("status") or {}).get("operationState") or {})


def _exists(runtime: Runtime, api: str, kind: str, name: str) -> bool:
    try:
        runtime.cluster.get(api, kind, name, "default")
    except NotFound:
        return False
    return True


async def test_a_commit_syncs_in_waves_through_the_kubernetes_api(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    files = {"app/all.yaml": dump(MIGRATE, web_deployment("web", ready_path="/readyz"),
                                  SETTINGS)}
    revision = remote.commit(files, "web, its settings and a migration hook")
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0,
                      api_port=0)
    runtime.cluster.apply({"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": "argocd"}}, field_manager="test")
    runtime.cluster.apply(default_project(), field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop))]
    http = httpx2.AsyncClient()
    api = None
    try:
        await eventually(lambda: runtime.api is not None, timeout=30, what="the API serving")
        assert runtime.api is not None
        api = KubeCluster(Transport(httpx2.Client(base_url=f"http://{runtime.api.address}")))
        settings = EngineSettings(state_dir=tmp_path / "engine", app_poll_seconds=3600,
                                  loops=frozenset({Loop.APPLICATIONS}))
        engine = Engine(cluster=api, clock=clock, http=http, settings=settings)
        tasks.append(asyncio.create_task(engine.run(stop)))
        runtime.cluster.apply(application("shop", remote.url, automated={"prune": True}),
                              field_manager="test")
        await eventually(
            lambda: _op(runtime).get("phase") == "Succeeded"
            and _op(runtime)["syncResult"]["revision"] == revision,
            timeout=60, what="the revision synced through the API")
        assert _exists(runtime, "v1", "ConfigMap", "settings")
        assert not _exists(runtime, "batch/v1", "Job", "migrate")  # ran, then HookSucceeded
        managers = {m["manager"] for m in runtime.cluster.get(
            "v1", "ConfigMap", "settings", "default")["metadata"]["managedFields"]}
        assert managers == {"headway-application-controller"}  # applied by the engine
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
        await http.aclose()
        if api is not None:
            api.close()
