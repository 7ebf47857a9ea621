"""End to end on the local runtime: deleting an Application runs its PreDelete Job as a real
process first, and deletes the app's resources only after the Job succeeded; a PreDelete Job
that fails blocks the deletion with a DeletionError naming it, and the resources stay. A
PostDelete Job runs as a real process too (its order is pinned in test_app_pre_delete_hooks.py).

The hook Job waits for a file the test writes, so "the resources are still there while the
hook runs" is observed, not timed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_sync.e2e_helpers import API, Remote, application, default_project, dump, python_job
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from polling import eventually

pytestmark = pytest.mark.slow

SETTINGS = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}
HOOK = {"argocd.argoproj.io/hook": "PreDelete"}


def _exists(runtime: Runtime, api: str, kind: str, name: str, namespace: str) -> bool:
    try:
        runtime.cluster.get(api, kind, name, namespace)
    except NotFound:
        return False
    return True


def _app(runtime: Runtime) -> dict[str, Any]:
    return runtime.cluster.get(API, "Application", "shop", "argocd")


def _synced(runtime: Runtime) -> bool:
    return (_app(runtime).get("status") or {}).get("sync", {}).get("status") == "Synced"


def _job_ran(runtime: Runtime) -> bool:
    try:
        job = runtime.cluster.get("batch/v1", "Job", "teardown", "default")
    except NotFound:
        return False
    return bool((job.get("status") or {}).get("active"))


@asynccontextmanager
async def _running(
    tmp_path: Path, hook_code: str, hook: dict[str, str] = HOOK
) -> AsyncIterator[Runtime]:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/all.yaml": dump(SETTINGS, python_job("teardown", hook_code, hook))})
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
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
    app = application("shop", remote.url, automated={})
    app["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    runtime.cluster.apply(app, field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        await eventually(lambda: _synced(runtime), timeout=30, what="the app synced")
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
        await http.aclose()


async def test_the_pre_delete_job_runs_before_the_resources_are_deleted(tmp_path: Path) -> None:
    go, ran = tmp_path / "go", tmp_path / "ran"
    code = (
        "import pathlib, time\n"
        f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.1)\n"
        f"pathlib.Path({str(ran)!r}).write_text('drained')\n"
    )
    async with _running(tmp_path, code) as runtime:
        assert not _exists(runtime, "batch/v1", "Job", "teardown", "default")  # not synced
        runtime.cluster.delete(API, "Application", "shop", "argocd")
        await eventually(lambda: _job_ran(runtime), timeout=30, what="the PreDelete Job runs")
        assert _exists(runtime, "v1", "ConfigMap", "settings", "default")
        assert _app(runtime)["metadata"]["deletionTimestamp"]
        go.write_text("")
        await eventually(
            lambda: not _exists(runtime, API, "Application", "shop", "argocd"),
            timeout=40,
            what="the Application gone",
        )
        assert ran.read_text() == "drained"
        assert not _exists(runtime, "v1", "ConfigMap", "settings", "default")


async def test_a_failing_pre_delete_job_blocks_the_deletion(tmp_path: Path) -> None:
    async with _running(tmp_path, "raise SystemExit(3)") as runtime:
        runtime.cluster.delete(API, "Application", "shop", "argocd")

        def blocked() -> str:
            conditions = (_app(runtime).get("status") or {}).get("conditions") or []
            return "".join(c["message"] for c in conditions if c["type"] == "DeletionError")

        await eventually(blocked, timeout=40, what="DeletionError")
        assert blocked().startswith("PreDelete hook batch/Job/default/teardown: ")
        assert _exists(runtime, "v1", "ConfigMap", "settings", "default")
        assert _exists(runtime, API, "Application", "shop", "argocd")


async def test_the_post_delete_job_runs_as_a_real_process_and_the_application_goes(
    tmp_path: Path,
) -> None:
    ran = tmp_path / "ran"
    hook = {"argocd.argoproj.io/hook": "PostDelete"}
    code = f"import pathlib\npathlib.Path({str(ran)!r}).write_text('notified')\n"
    async with _running(tmp_path, code, hook) as runtime:
        runtime.cluster.delete(API, "Application", "shop", "argocd")
        await eventually(
            lambda: not _exists(runtime, API, "Application", "shop", "argocd"),
            timeout=40,
            what="the Application gone",
        )
        assert ran.read_text() == "notified"
        job = runtime.cluster.get("batch/v1", "Job", "teardown", "default")
        assert job["status"]["succeeded"] == 1
        assert not _exists(runtime, "v1", "ConfigMap", "settings", "default")
