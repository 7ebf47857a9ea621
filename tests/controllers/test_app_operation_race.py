"""Taking an operation is atomic (issue 16, item 7): a competing `headway app sync` landed at
every write the controller makes while it takes or starts an operation is refused or wins
alone, so a PreSync hook runs once. The race window is opened deterministically by a store
whose writes to Applications first run the competing command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
    phase,
)
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import WatchEventType
from headway.controllers.app.controller import ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry
from headway.model.obj import Obj

_register_all()
runner = CliRunner()


class RacingStore(LocalCluster):
    """The controller's view of the store: before each write to an Application it runs
    `before_write` (the competing command), exactly where a real race would land."""

    before_write: Callable[[], None] = staticmethod(lambda: None)

    def update(
        self, obj: Obj, *, field_manager: str = "headway", with_status: bool = False
    ) -> Obj:
        if obj.get("kind") == "Application":
            self.before_write()
        return super().update(obj, field_manager=field_manager, with_status=with_status)

    def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        status: Obj,
        *,
        resource_version: str | None = None,
    ) -> Obj:
        if kind == "Application":
            self.before_write()
        return super().patch_status(
            api_version, kind, name, namespace, status, resource_version=resource_version
        )


def _sync(tmp_path: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["app", "sync", "shop", "--state-dir", str(tmp_path / "state")])
    return result.exit_code, result.output


def _racing_controller(h: Harness, tmp_path: Path) -> tuple[ApplicationController, RacingStore]:
    store = RacingStore(tmp_path / "state" / "cluster.db", h.clock)
    controller = ApplicationController(
        store=store, clusters=ClusterRegistry(h.store), sources=h.reader, clock=h.clock
    )
    return controller, store


def _hook_runs(h: Harness, since: str) -> int:
    events = h.store.watch("batch/v1", "Job", namespace="demo", resource_version=since)
    return sum(
        1
        for e in events
        if e.type is WatchEventType.ADDED and e.object["metadata"]["name"] == "migrate"
    )


def _settle(h: Harness, controller: ApplicationController, *, steps: int = 40) -> None:
    """Step until no operation is running or requested, finishing the hook Job each time
    it is waited for."""
    for _ in range(steps):
        controller.reconcile("shop", APPS_NS)
        if h.exists("Job", "migrate") and not h.get("Job", "migrate").get("status"):
            h.finish_job("migrate")
        live = h.app("shop")
        if "operation" not in live and phase(live.get("status") or {}) in ("Succeeded", "Failed"):
            controller.reconcile("shop", APPS_NS)  # nothing left to take
            if "operation" not in h.app("shop"):
                return
    raise AssertionError(f"operations did not settle: {h.app('shop')}")


def _files() -> dict[str, str]:
    return {"app/all.yaml": manifests(hook_job("migrate", "PreSync"), config_map("settings"))}


def test_a_second_sync_during_the_take_is_refused_and_the_hook_runs_once(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, _files())
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    since = h.store.revision()
    assert _sync(tmp_path) == (0, "sync of shop requested\n")
    controller, store = _racing_controller(h, tmp_path)
    competing: list[tuple[int, str]] = []
    store.before_write = lambda: competing.append(_sync(tmp_path))
    controller.reconcile("shop", APPS_NS)  # takes the requested operation
    store.before_write = lambda: None
    assert competing, "the take made no write to the Application"
    assert all(code == 1 for code, _ in competing), competing
    _settle(h, controller)
    assert _hook_runs(h, since) == 1
    assert len(h.status("shop")["history"]) == 1


def test_a_sync_requested_while_the_automated_policy_starts_one_runs_alone(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, _files())
    h.install(application("shop", h.remote.url, path="app", automated={}))
    since = h.store.revision()
    controller, store = _racing_controller(h, tmp_path)
    competing: list[tuple[int, str]] = []

    def request_once() -> None:
        if not competing:
            competing.append(_sync(tmp_path))

    store.before_write = request_once
    controller.reconcile("shop", APPS_NS)  # compares, then the automated policy starts a sync
    store.before_write = lambda: None
    assert competing == [(0, "sync of shop requested\n")]
    _settle(h, controller)
    history = h.status("shop")["history"]
    assert [entry["initiatedBy"] for entry in history] == [{"username": "headway-cli"}]
    assert _hook_runs(h, since) == 1


def test_two_cli_syncs_read_before_either_writes_one_wins(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_harness(tmp_path, clock, _files())
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    original = LocalCluster.update
    second: list[tuple[int, str]] = []

    def update_after_a_competitor(self: LocalCluster, obj: Obj, **kwargs: Any) -> Obj:
        if obj.get("operation") and not second:  # the first CLI, between its read and write
            second.append((0, ""))
            second[0] = _sync(tmp_path)
        return original(self, obj, **kwargs)

    monkeypatch.setattr(LocalCluster, "update", update_after_a_competitor)
    first = _sync(tmp_path)
    monkeypatch.undo()
    assert second == [(0, "sync of shop requested\n")]
    assert first[0] == 1 and "changed while the operation was written" in first[1]


def test_a_terminate_landing_during_a_step_is_not_overwritten(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, _files())
    h.install(application("shop", h.remote.url, path="app"))
    h.step("shop")
    assert _sync(tmp_path)[0] == 0
    controller, store = _racing_controller(h, tmp_path)
    for _ in range(10):  # until the PreSync hook runs
        controller.reconcile("shop", APPS_NS)
        if h.exists("Job", "migrate"):
            break
    h.finish_job("migrate")
    terminated: list[tuple[int, str]] = []

    def terminate_once() -> None:
        if not terminated:
            args = ["app", "terminate", "shop", "--state-dir", str(tmp_path / "state")]
            result = runner.invoke(app, args)
            terminated.append((result.exit_code, result.output))

    store.before_write = terminate_once
    controller.reconcile("shop", APPS_NS)  # the hook's wave passes; terminate lands first
    store.before_write = lambda: None
    assert terminated == [(0, "operation on shop is terminating\n")]
    status = h.run("shop", lambda s: phase(s) in ("Succeeded", "Failed"))
    assert (phase(status), status["operationState"]["message"]) == (
        "Failed",
        "Operation terminated",
    )
    assert not h.exists("ConfigMap", "settings")
