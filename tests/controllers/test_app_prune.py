"""Prune: automated prune, Prune=false, Prune=confirm, PruneLast, allowEmpty."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from app_harness import (
    APPS_NS,
    application,
    config_map,
    deployment,
    make_harness,
    manifests,
    message,
    phase,
)

from headway.clock import VirtualClock
from headway.cluster.errors import NotFound
from headway.controllers.app.controller import APP_API_VERSION
from headway.controllers.app.deletion import DELETION_PATIENCE_SECONDS
from headway.controllers.app.operations import CONFIRM_PRUNE_ANNOTATION
from headway.kubetime import format_time


def _synced(s: dict) -> bool:  # type: ignore[type-arg]
    return phase(s) == "Succeeded" and s["sync"]["status"] == "Synced"


def test_automated_prune_deletes_what_left_git(tmp_path: Path, clock: VirtualClock) -> None:
    files = {"app/all.yaml": manifests(config_map("keep"), config_map("old"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": manifests(config_map("keep"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: not h.exists("ConfigMap", "old") and _synced(s))
    pruned = [r for r in status["operationState"]["syncResult"]["resources"] if r["name"] == "old"]
    assert pruned[0]["status"] == "Pruned"


def test_prune_false_is_skipped_and_reported(tmp_path: Path, clock: VirtualClock) -> None:
    sticky = config_map("sticky", **{"argocd.argoproj.io/sync-options": "Prune=false"})
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), sticky)})
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: phase(s) == "Succeeded" and len(s["history"]) == 2)
    assert h.exists("ConfigMap", "sticky")
    entry = [
        r for r in status["operationState"]["syncResult"]["resources"] if r["name"] == "sticky"
    ]
    assert (entry[0]["status"], entry[0]["message"]) == ("PruneSkipped", "ignored (no prune)")


def test_prune_confirm_waits_for_approval(tmp_path: Path, clock: VirtualClock) -> None:
    guarded = config_map("guarded", **{"argocd.argoproj.io/sync-options": "Prune=confirm"})
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), guarded)})
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: "pruning confirmation" in message(s))
    assert message(status) == "Waiting for pruning confirmation of v1/ConfigMap/guarded"
    for _ in range(3):
        h.step("shop")
    assert h.exists("ConfigMap", "guarded")
    clock.advance(5)
    approve = {CONFIRM_PRUNE_ANNOTATION: format_time(clock.now())}
    h.store.apply(
        {
            "apiVersion": APP_API_VERSION,
            "kind": "Application",
            "metadata": {"name": "shop", "namespace": APPS_NS, "annotations": approve},
        },
        field_manager="confirm",
    )
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert not h.exists("ConfigMap", "guarded")


def test_an_approval_older_than_the_operation_does_not_count(
    tmp_path: Path, clock: VirtualClock
) -> None:
    guarded = config_map("guarded", **{"argocd.argoproj.io/sync-options": "Prune=confirm"})
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), guarded)})
    app = application("shop", h.remote.url, path="app", automated={"prune": True})
    app["metadata"]["annotations"] = {CONFIRM_PRUNE_ANNOTATION: format_time(clock.now())}
    h.install(app)
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": manifests(config_map("a"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(timedelta(minutes=1).total_seconds())
    h.run("shop", lambda s: "pruning confirmation" in message(s))
    assert h.exists("ConfigMap", "guarded")


def test_prune_last_prunes_after_every_wave(tmp_path: Path, clock: VirtualClock) -> None:
    files = {"app/all.yaml": manifests(config_map("old"), config_map("a", wave=0))}
    h = make_harness(tmp_path, clock, files)
    h.install(
        application(
            "shop", h.remote.url, path="app", automated={"prune": True}, options=("PruneLast=true",)
        )
    )
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": manifests(config_map("a", wave=0), config_map("b", wave=3))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: h.exists("ConfigMap", "b"))
    assert h.exists("ConfigMap", "old")  # wave 3 applied, the prune comes after it
    h.run("shop", lambda s: not h.exists("ConfigMap", "old"))


def test_automated_prune_never_wipes_out_everything_without_allow_empty(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    h.run("shop", _synced)
    h.remote.commit({"app/all.yaml": "# nothing left\n"})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: any(c["type"] == "SyncError" for c in s["conditions"]))
    errors = [c["message"] for c in status["conditions"] if c["type"] == "SyncError"]
    assert "auto-sync will wipe out all resources" in errors[0]
    assert h.exists("ConfigMap", "a")


def test_deleting_an_app_with_the_resources_finalizer_cascades(
    tmp_path: Path, clock: VirtualClock
) -> None:
    kept = config_map("kept", **{"argocd.argoproj.io/sync-options": "Delete=false"})
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"), kept)})
    app = application("shop", h.remote.url, path="app", automated={})
    app["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    h.install(app)
    h.run("shop", _synced)
    h.store.delete(APP_API_VERSION, "Application", "shop", APPS_NS)
    assert h.app("shop")["metadata"]["deletionTimestamp"]
    for _ in range(5):
        if h.step("shop") is None:
            break
    assert not h.exists("ConfigMap", "a")
    assert h.exists("ConfigMap", "kept")  # Delete=false
    with pytest.raises(NotFound):
        h.app("shop")


def test_prune_propagation_policy_orphan_keeps_the_dependents(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(config_map("keep"), deployment("web"))}
    h = make_harness(tmp_path, clock, files)
    h.install(
        application(
            "shop",
            h.remote.url,
            path="app",
            automated={"prune": True},
            options=("PrunePropagationPolicy=orphan",),
        )
    )
    h.run("shop", lambda s: h.exists("Deployment", "web"))
    h.make_ready("web")
    h.run("shop", _synced)
    owner = h.get("Deployment", "web")
    replica_set = {  # what the Deployment controller would have made
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "namespace": "demo",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "web",
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}},
    }
    h.store.apply(replica_set, field_manager="deployment-controller")
    h.remote.commit({"app/all.yaml": manifests(config_map("keep"))})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: not h.exists("Deployment", "web") and _synced(s))
    left = h.store.get("apps/v1", "ReplicaSet", "web-1", "demo")
    assert not left["metadata"].get("ownerReferences")


def test_a_cascade_held_by_a_finalizer_waits_then_says_what_holds_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    held = config_map("held")
    held["metadata"]["finalizers"] = ["example.com/backup-first"]  # as a real controller's
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(held)})
    app = application("shop", h.remote.url, path="app", automated={})
    app["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    h.install(app)
    h.run("shop", _synced)
    h.store.delete(APP_API_VERSION, "Application", "shop", APPS_NS)
    h.step("shop")
    assert h.app("shop")["status"]["conditions"] == []  # deleting is normal at first
    clock.advance(DELETION_PATIENCE_SECONDS)
    h.step("shop")
    (condition,) = h.app("shop")["status"]["conditions"]
    assert (condition["type"], condition["message"]) == (
        "DeletionError",
        "still waiting after 120s for the cluster to delete: ConfigMap/held (deleting, "
        "held by finalizers example.com/backup-first)",
    )
    live = h.get("ConfigMap", "held")
    live["metadata"]["finalizers"] = []  # the finalizer's controller lets go
    h.store.update(live, field_manager="backup-controller")
    for _ in range(3):
        if h.step("shop") is None:
            break
    with pytest.raises(NotFound):
        h.app("shop")
