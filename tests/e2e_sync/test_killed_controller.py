"""A real `headway serve` process killed (SIGKILL) in the middle of a sync; a new process
over the same store finishes it at the same wave without re-running the completed hook."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
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
    stop_gently,
)
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.api.store import LocalCluster
from polling import wait_for

pytestmark = pytest.mark.slow

HOOK = python_job("migrate", "print('done')", {"argocd.argoproj.io/hook": "PreSync"})
SETTINGS = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(state: Path, apps: Path, log: Path, *, metrics: int = 0) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "headway"), "serve", "--state-dir", str(state)]
    command += ["--apps", str(apps), "--app-poll-seconds", "3600", "--metrics-port", str(metrics)]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)


def _serving(process: subprocess.Popen[bytes], log: Path) -> bool:
    """Until `serve` printed `serving ... (pid N, ...)` (its controllers and /metrics are up);
    False when it exited first (a --metrics-port another process took in between)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if f"(pid {process.pid}," in log.read_text(errors="replace"):
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.1)
    raise AssertionError("headway serve did not start within 60 s")


def _serve_with_metrics(
    state: Path, apps: Path, log: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """`serve` with /metrics on a port that was free; the port is probed then released, so
    another test may take it first: then the start is retried on a new port."""
    for _ in range(5):
        port = _free_port()
        process = _serve(state, apps, log, metrics=port)
        if _serving(process, log):
            return process, port
    raise AssertionError("headway serve could not bind a free --metrics-port in 5 tries")


def _scrape(port: int) -> str:
    try:
        text = httpx2.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
    except httpx2.HTTPError:
        return ""
    return text if 'sync_status="Synced"' in text else ""


def _operation(store: LocalCluster) -> dict[str, Any]:
    try:
        app = store.get(API, "Application", "shop", "argocd")
    except NotFound:
        return {}
    return dict((app.get("status") or {}).get("operationState") or {})


def test_a_killed_controller_process_resumes_the_sync(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/all.yaml": dump(HOOK, SETTINGS)}, "hook and settings")
    apps = tmp_path / "apps.yaml"
    apps.write_text(dump(default_project(), application("shop", remote.url, automated={})))
    state = tmp_path / "state"
    state.mkdir()
    store = LocalCluster(state / "cluster.db", SystemClock())
    first = _serve(state, apps, tmp_path / "serve.log")
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for(
            lambda: "PreSync wave 0 waiting: Job/migrate" in str(_operation(store).get("message")),
            timeout=60,
            what="the PreSync hook created (no runtime runs it)",
        )
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        uid = store.get("batch/v1", "Job", "migrate", "default")["metadata"]["uid"]
        second, port = _serve_with_metrics(state, apps, tmp_path / "serve.log")
        store.patch_status(  # the Job completes while no controller or a new one watches
            "batch/v1",
            "Job",
            "migrate",
            "default",
            {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]},
        )
        wait_for(
            lambda: _operation(store).get("phase") == "Succeeded",
            timeout=60,
            what="the sync finished by the new process",
        )
        assert store.get("batch/v1", "Job", "migrate", "default")["metadata"]["uid"] == uid
        assert store.get("v1", "ConfigMap", "settings", "default")["metadata"]["name"]
        history = store.get(API, "Application", "shop", "argocd")["status"]["history"]
        assert [h["phase"] for h in history] == ["Succeeded"]
        metrics = wait_for(
            lambda: _scrape(port), timeout=60, what="the Application controller's /metrics"
        )
        assert 'headway_app_info{health_status="Healthy",name="shop"' in metrics
    except AssertionError as err:  # the serve output is what explains a timeout
        log = (tmp_path / "serve.log").read_text(errors="replace")[-4000:]
        raise AssertionError(f"{err}\n--- serve.log (tail) ---\n{log}") from None
    finally:
        for process in (first, second):
            if process is not None:
                stop_gently(process, grace_seconds=30)
        store.close()
