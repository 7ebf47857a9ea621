"""A commit to a repository many apps read reconciles the apps whose files changed first,
then the rest (which only record the new revision). Counted in reconcile order, not time:
taken in name order, the changed app waited behind every app before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import Harness, application, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.steps import SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry

NAMES = [f"app-{i:02d}" for i in range(20)]


def config_map(name: str, flag: str = "on") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"FLAG": flag}}


class OrderController(ApplicationController):
    order: list[str]

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.order.append(name)
        return super().reconcile(name, namespace)


def watcher(h: Harness, clock: VirtualClock) -> tuple[SourceWatchSteps, OrderController]:
    controller = OrderController(
        store=h.store, clusters=ClusterRegistry(h.store), sources=h.reader, clock=clock
    )
    controller.order = []
    steps = SourceWatchSteps(controller, h.reader, h.store)
    steps.step(SourceWatchSteps.KEY)  # notes where the refs point
    return steps, controller


def test_a_commit_to_app_17s_path_reconciles_app_17_first(tmp_path: Path) -> None:
    clock = VirtualClock()
    files = {f"apps/{n}/all.yaml": manifests(config_map(n)) for n in NAMES}
    h = make_harness(tmp_path, clock, files)
    for name in NAMES:
        h.install(application(name, h.remote.url, path=f"apps/{name}"))
    steps, controller = watcher(h, clock)
    assert controller.order == []

    sha = h.remote.commit({"apps/app-17/all.yaml": manifests(config_map("app-17", "off"))})
    steps.step(SourceWatchSteps.KEY)

    assert controller.order == ["app-17", *(n for n in NAMES if n != "app-17")]
    assert all(h.status(n)["sync"]["revision"] == sha for n in NAMES)


def test_an_app_whose_kustomize_base_changed_goes_first(tmp_path: Path) -> None:
    clock = VirtualClock()
    kustomization = "resources:\n  - ../../base\n"
    files = {
        "base/cm.yaml": manifests(config_map("shared")),
        "apps/a-plain/all.yaml": manifests(config_map("plain")),
        "apps/z-kustomized/kustomization.yaml": kustomization,
    }
    h = make_harness(tmp_path, clock, files)
    for name in ("a-plain", "z-kustomized"):
        h.install(application(name, h.remote.url, path=f"apps/{name}"))
    steps, controller = watcher(h, clock)

    h.remote.commit({"base/cm.yaml": manifests(config_map("shared", "off"))})
    steps.step(SourceWatchSteps.KEY)

    assert controller.order == ["z-kustomized", "a-plain"]
