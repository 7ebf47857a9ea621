"""What an idle fleet and one commit cost the Application loop, counted in reconciles and
renders on a virtual clock (the counts, not the time, are what grew with the fleet).

A status write used to come back through the Application watch and queue one more
reconcile of the app that wrote it: an idle fleet reconciled every app again after each
pass, and one commit cost two reconciles per app of the repository."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from app_harness import APPS_NS, Harness, application, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import Manager
from headway.source.render import Chosen, RenderCache, RenderRequest, RenderResult
from headway.sync.comparison import prepare_desired

APPS = 20
CHANGED = "app-07"


def names() -> list[str]:
    return [f"app-{i:02d}" for i in range(APPS)]


def objects(name: str, flag: str = "on") -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-{j}"},
         "data": {"FLAG": flag}}
        for j in range(2)
    ]


class CountingController(ApplicationController):
    reconciled: Counter[str]

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.reconciled[name] += 1
        return super().reconcile(name, namespace)


class CountingRenders(RenderCache):
    rendered: Counter[str]

    def render(self, request: RenderRequest, chosen: Chosen | None = None) -> RenderResult:
        self.rendered[request.app_name] += 1
        return super().render(request, chosen)


def fleet(tmp_path: Path, clock: VirtualClock) -> tuple[Harness, CountingController, Manager]:
    files = {f"apps/{n}/all.yaml": manifests(*objects(n)) for n in names()}
    h = make_harness(tmp_path, clock, files)
    for name in names():
        h.install(application(name, h.remote.url, path=f"apps/{name}"))
        for obj in prepare_desired(objects(name), app=name, namespace="demo"):
            h.store.create(obj, field_manager="test")
    renders = CountingRenders(max_entries=64)
    renders.rendered = Counter()
    h.reader.render_cache = renders
    controller = CountingController(
        store=h.store, clusters=ClusterRegistry(h.store), sources=h.reader, clock=clock
    )
    controller.reconciled = Counter()
    manager = Manager(h.store, clock, resync_seconds=30.0)  # the engine's default
    manager.register(ApplicationSteps(controller, h.store, apps_namespace=APPS_NS))
    watcher = SourceWatchSteps(controller, h.reader, h.store)
    watcher.watches = (("v1", "Namespace"), (APP_API_VERSION, "Application"))
    manager.register(watcher)
    return h, controller, manager


def run_for(manager: Manager, clock: VirtualClock, seconds: float) -> None:
    async def loop() -> None:
        for _ in range(int(seconds / 0.5)):
            await manager.run_once()
            clock.advance(0.5)

    asyncio.run(loop())


def first_pass(manager: Manager, controller: CountingController) -> None:
    """Step until every app was reconciled once (what its status writes leave queued is
    the idle window's to show)."""

    async def loop() -> None:
        while set(controller.reconciled) != set(names()):
            await manager.run_once()

    asyncio.run(loop())


def test_an_idle_fleet_reconciles_nothing_between_resyncs(tmp_path: Path) -> None:
    clock = VirtualClock()
    h, controller, manager = fleet(tmp_path, clock)
    first_pass(manager, controller)
    assert all(h.status(n)["sync"]["status"] == "Synced" for n in names())
    controller.reconciled.clear()

    run_for(manager, clock, 150)  # nothing changes, across five of the manager's resyncs

    assert sum(controller.reconciled.values()) == 0

    run_for(manager, clock, 60)  # past the poll interval each step asked for (180 s)

    assert controller.reconciled == Counter(dict.fromkeys(names(), 1))


def test_one_commit_renders_only_the_app_it_touches_and_reconciles_each_app_once(
    tmp_path: Path,
) -> None:
    clock = VirtualClock()
    h, controller, manager = fleet(tmp_path, clock)
    run_for(manager, clock, 10)
    controller.reconciled.clear()
    renders = h.reader.render_cache
    assert isinstance(renders, CountingRenders)
    renders.rendered.clear()

    sha = h.remote.commit({f"apps/{CHANGED}/all.yaml": manifests(*objects(CHANGED, "off"))})
    run_for(manager, clock, 10)

    changed = h.status(CHANGED)["sync"]
    assert (changed["revision"], changed["status"]) == (sha, "OutOfSync")
    assert set(renders.rendered) == {CHANGED}
    # Every app reading the repository records the new revision (as Argo CD's status does),
    # once: its own status write does not queue it again.
    assert controller.reconciled == Counter(dict.fromkeys(names(), 1))
    assert all(h.status(n)["sync"]["revision"] == sha for n in names())


def test_the_resync_still_looks_at_an_app_that_waits_for_something(tmp_path: Path) -> None:
    clock = VirtualClock()
    h, controller, manager = fleet(tmp_path, clock)
    h.store.delete("v1", "ConfigMap", "app-00-0", "demo")  # app-00: OutOfSync, Missing
    first_pass(manager, controller)
    run_for(manager, clock, 10)
    assert h.status("app-00")["sync"]["status"] == "OutOfSync"
    controller.reconciled.clear()

    run_for(manager, clock, 150)

    assert set(controller.reconciled) == {"app-00"}
    assert controller.reconciled["app-00"] >= 4  # one per 30 s resync
