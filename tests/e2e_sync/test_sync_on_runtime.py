"""End to end on the local runtime: a commit to a real Git remote is synced in waves by
the Application controller under the controller manager, hooks and workloads run as real
processes, and a Deployment that never becomes ready holds the next wave."""

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
MIGRATE = python_job(
    "migrate",
    "print('migrated')",
    {
        "argocd.argoproj.io/hook": "PreSync",
        "argocd.argoproj.io/hook-delete-policy": "HookSucceeded",
    },
)


def _files(ready_path: str) -> dict[str, str]:
    return {"app/all.yaml": dump(MIGRATE, web_deployment("web", ready_path=ready_path), SETTINGS)}


def _op(runtime: Runtime) -> dict[str, Any]:
    app = runtime.cluster.get(API, "Application", "shop", "argocd")
    return dict((app.get("status") or {}).get("operationState") or {})


def _exists(runtime: Runtime, api: str, kind: str, name: str) -> bool:
    try:
        runtime.cluster.get(api, kind, name, "default")
    except NotFound:
        return False
    return True


async def test_commit_to_healthy_in_waves_with_real_processes(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit(_files("/never-ready"), "web whose readiness never passes")
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    # Git polling is set far beyond the test: only the ref watch can notice the commits.
    settings = EngineSettings(
        state_dir=tmp_path / "state", loops=frozenset({Loop.APPLICATIONS}), app_poll_seconds=3600
    )
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    runtime.cluster.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
        field_manager="test",
    )
    runtime.cluster.apply(default_project(), field_manager="test")
    runtime.cluster.apply(
        application("shop", remote.url, automated={"prune": True}), field_manager="test"
    )
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        await eventually(
            lambda: (
                "wave 0 waiting: Deployment/web Progressing" in str(_op(runtime).get("message"))
            ),
            timeout=30,
            what="wave 0 held by the never-ready Deployment",
        )
        assert not _exists(runtime, "v1", "ConfigMap", "settings")
        hooks = [r for r in _op(runtime)["syncResult"]["resources"] if r.get("hookType")]
        assert hooks[0]["hookPhase"] == "Succeeded"  # the hook Job ran as a real process
        job = runtime.cluster.get("batch/v1", "Job", "migrate", "default")
        assert job["status"]["succeeded"] == 1
        # Terminate the stuck operation (as `headway app terminate` does) and fix Git.
        app = runtime.cluster.get(API, "Application", "shop", "argocd")
        status = dict(app["status"])
        status["operationState"] = {**status["operationState"], "phase": "Terminating"}
        runtime.cluster.patch_status(API, "Application", "shop", "argocd", status)
        await eventually(
            lambda: _op(runtime).get("phase") == "Failed", timeout=10, what="terminated"
        )
        fixed = remote.commit(_files("/readyz"), "readiness on /readyz")
        await eventually(
            lambda: (
                _op(runtime).get("phase") == "Succeeded"
                and _op(runtime)["syncResult"]["revision"] == fixed
            ),
            timeout=40,
            what="the fixed revision synced",
        )
        assert _exists(runtime, "v1", "ConfigMap", "settings")
        assert not _exists(runtime, "batch/v1", "Job", "migrate")  # HookSucceeded
        final = runtime.cluster.get(API, "Application", "shop", "argocd")["status"]
        await eventually(
            lambda: (
                runtime.cluster.get(API, "Application", "shop", "argocd")["status"]["sync"][
                    "status"
                ]
                == "Synced"
            ),
            timeout=10,
            what="Synced",
        )
        assert [h["phase"] for h in final["history"]] == ["Failed", "Succeeded"]
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
        await http.aclose()
