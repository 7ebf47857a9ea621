"""A deleted Application whose `metadata.deletionTimestamp` does not read as a time (an API
server never writes one; a foreign or hand-made store can hand one over) runs no delete hook
and deletes nothing, with a DeletionError naming the field and what to do; once the field
reads as a time, the deletion goes on and each hook runs once.

Before: the delete-hook step took "now" for the unreadable moment, so every step was a new
run of the deletion and created the PreDelete hook again (a teardown Job run at each step),
and a resource awaiting a deletion confirmation waited for ever with no word of why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_harness import APPS_NS, Harness, application, config_map, hook_job, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION
from headway.controllers.app.deletion import RESOURCES_FINALIZER

TEARDOWN = hook_job("teardown", "PreDelete")


def _deleting(tmp_path: Path, clock: VirtualClock) -> Harness:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), TEARDOWN)})
    app = application("shop", h.remote.url, path="app", automated={})
    app["metadata"]["finalizers"] = [RESOURCES_FINALIZER]
    h.install(app)
    h.run("shop", lambda s: (s.get("sync") or {}).get("status") == "Synced")
    h.store.delete(APP_API_VERSION, "Application", "shop", APPS_NS)
    return h


def _reading_deletion_time_as(
    monkeypatch: pytest.MonkeyPatch, h: Harness, value: object
) -> None:
    """The store hands the Application over with `deletionTimestamp` set to `value`."""
    get = h.store.get

    def altered(api: str, kind: str, name: str, namespace: str | None = None) -> Any:
        obj = get(api, kind, name, namespace)
        if kind == "Application":
            obj = {**obj, "metadata": {**obj["metadata"], "deletionTimestamp": value}}
        return obj

    monkeypatch.setattr(h.store, "get", altered)


@pytest.mark.parametrize("value", ["yesterday", "2026-13-45T00:00:00Z", 1700000000, {"t": 1}])
def test_an_unreadable_deletion_time_runs_no_hook_and_deletes_nothing(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch, value: object
) -> None:
    h = _deleting(tmp_path, clock)
    with monkeypatch.context() as patched:
        _reading_deletion_time_as(patched, h, value)
        for _ in range(4):
            h.step("shop")
            clock.advance(5)
        assert not h.exists("Job", "teardown")
        assert h.exists("ConfigMap", "a")
        (condition,) = h.app("shop")["status"]["conditions"]
    assert condition["type"] == "DeletionError"
    assert f"metadata.deletionTimestamp {value!r} is not an RFC 3339 time" in condition["message"]
    assert "remove its finalizers" in condition["message"]
    # the store's own time again: the deletion goes on, the hook is created once
    h.step("shop")
    created = h.get("Job", "teardown")["metadata"]["uid"]
    for _ in range(3):
        h.step("shop")
        assert h.get("Job", "teardown")["metadata"]["uid"] == created
    assert h.app("shop")["status"]["conditions"] == []
