"""A real `headway serve` killed (the exit-point test hook: exit 137, no cleanup) in the two
windows of an Application's deletion that a random kill rarely hits: right after it created
the PreDelete hook Job, and after the hook succeeded with the PreDelete finalizer still on.
Each next process carries on from the store: the Job is created once (one uid throughout),
nothing is deleted before the hook succeeded, and the last process finishes the deletion."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

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
from e2e_sync.test_killed_controller import _serve, _serving
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.api.store import LocalCluster
from headway.controllers import exit_points
from headway.controllers.app.deletion import PRE_DELETE_FINALIZER
from polling import wait_for

pytestmark = pytest.mark.slow

SETTINGS = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}
TEARDOWN = python_job("teardown", "print('drained')", {"argocd.argoproj.io/hook": "PreDelete"})
COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}


def _app(store: LocalCluster) -> dict[str, Any] | None:
    try:
        return store.get(API, "Application", "shop", "argocd")
    except NotFound:
        return None


def _exists(store: LocalCluster, api: str, kind: str, name: str) -> bool:
    try:
        store.get(api, kind, name, "default")
    except NotFound:
        return False
    return True


def _killed_at(point: str, state: Path, log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run `serve` until it exits at `point` (137, as a SIGKILL there would leave it)."""
    monkeypatch.setenv(exit_points.ENV, point)
    try:
        process = _serve(state, state / "no-apps", log)
        assert process.wait(timeout=90) == 137, log.read_text(errors="replace")[-3000:]
    finally:
        monkeypatch.delenv(exit_points.ENV)


def test_serve_killed_mid_deletion_runs_the_pre_delete_hook_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/all.yaml": dump(SETTINGS, TEARDOWN)})
    state, log = tmp_path / "state", tmp_path / "serve.log"
    (state / "no-apps").mkdir(parents=True)
    store = LocalCluster(state / "cluster.db", SystemClock())
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    app = application("shop", remote.url, automated={})
    app["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    for obj in (namespace, default_project(), app):
        store.apply(obj, field_manager="test")
    last: subprocess.Popen[bytes] | None = None
    try:
        first = _serve(state, state / "no-apps", log)
        assert _serving(first, log), log.read_text(errors="replace")[-2000:]
        wait_for(
            lambda: (
                PRE_DELETE_FINALIZER in ((_app(store) or {})["metadata"].get("finalizers") or [])
                and _exists(store, "v1", "ConfigMap", "settings")
            ),
            timeout=60,
            what="synced, with the PreDelete finalizer",
        )
        stop_gently(first, grace_seconds=30)
        store.delete(API, "Application", "shop", "argocd")

        _killed_at("pre-delete-hook-created", state, log, monkeypatch)
        created = store.get("batch/v1", "Job", "teardown", "default")["metadata"]["uid"]
        assert _exists(store, "v1", "ConfigMap", "settings")

        store.patch_status("batch/v1", "Job", "teardown", "default", COMPLETE)
        _killed_at("pre-delete-hooks-succeeded", state, log, monkeypatch)
        assert store.get("batch/v1", "Job", "teardown", "default")["metadata"]["uid"] == created
        assert PRE_DELETE_FINALIZER in (_app(store) or {})["metadata"]["finalizers"]
        assert _exists(store, "v1", "ConfigMap", "settings")

        last = _serve(state, state / "no-apps", log)
        wait_for(lambda: _app(store) is None, timeout=60, what="the Application gone")
        assert not _exists(store, "v1", "ConfigMap", "settings")
    except AssertionError as err:
        tail = log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"{err}\n--- serve.log (tail) ---\n{tail}") from None
    finally:
        if last is not None:
            stop_gently(last, grace_seconds=30)
        store.close()
