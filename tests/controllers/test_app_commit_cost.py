"""What one commit to one app costs the Application loop, counted (renders, reconciles, store
calls, objects read and written, SQLite's virtual-machine steps), at three fleet sizes on a
virtual clock: the changed app's own reconcile costs the same in every fleet, and the rest
grows by the same amount per added app (linearly: one cheap reconcile each), never as
apps x apps (a scan of every app per app, a list of the whole fleet per reconcile).

Timing at 1,000-10,000 apps is bench/bench_scale.py's; these are the counts behind it."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from app_harness import APPS_NS, Harness, application, make_harness, manifests

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import Manager
from headway.source.render import Chosen, RenderCache, RenderRequest, RenderResult
from headway.sync.comparison import prepare_desired

SIZES = (20, 60, 100)  # equally spaced: linear growth gives equal differences
OUTSIDE = "(outside any reconcile)"
READS = ("get", "list_with_revision", "list_page", "labelled", "label_revision")
WRITES = ("apply", "create", "update", "patch_status", "delete")


def names(apps: int) -> list[str]:
    return [f"app-{i:03d}" for i in range(apps)]


def objects(name: str, flag: str = "on") -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-{j}"},
         "data": {"FLAG": flag}}
        for j in range(2)
    ]


@dataclass
class Work:
    """What was done, per app reconciled (`OUTSIDE` for the source watcher's own work)."""

    current: str = OUTSIDE
    renders: Counter[str] = field(default_factory=Counter)
    reconciles: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    objects_read: Counter[str] = field(default_factory=Counter)
    writes: Counter[str] = field(default_factory=Counter)
    sqlite_steps: Counter[str] = field(default_factory=Counter)

    def clear(self) -> None:
        for counter in (self.renders, self.reconciles, self.calls, self.objects_read,
                        self.writes, self.sqlite_steps):
            counter.clear()

    def total(self, counter: Counter[str], *, but: str) -> int:
        return sum(n for name, n in counter.items() if name != but)


class CountingController(ApplicationController):
    work: Work

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.work.reconciles[name] += 1
        self.work.current = name
        try:
            return super().reconcile(name, namespace)
        finally:
            self.work.current = OUTSIDE


class CountingRenders(RenderCache):
    work: Work

    def render(self, request: RenderRequest, chosen: Chosen | None = None) -> RenderResult:
        self.work.renders[request.app_name] += 1
        return super().render(request, chosen)


def count_store(store: LocalCluster, work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    """Count every read and write on `store`, and SQLite's steps, by the app reconciling."""

    def counted(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            work.calls[work.current] += 1
            if name in WRITES:
                work.writes[work.current] += 1
            elif name == "get":
                work.objects_read[work.current] += 1
            elif name != "label_revision":  # a list, a (list, revision) pair or a page
                items = result[0] if isinstance(result, tuple) else getattr(
                    result, "items", result)
                work.objects_read[work.current] += len(items)
            return result

        return wrapper

    for name in (*READS, *WRITES):
        monkeypatch.setattr(store, name, counted(name, getattr(store, name)))

    def step() -> int:
        work.sqlite_steps[work.current] += 1
        return 0

    # Called on every virtual-machine instruction: a query scanning the whole fleet
    # costs steps in proportion to it, where an indexed lookup costs the same in any fleet.
    store._db._conn.set_progress_handler(step, 1)


def fleet(tmp_path: Path, apps: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Harness, Work,
                                                                                Manager]:
    clock = VirtualClock()
    files = {f"apps/{n}/all.yaml": manifests(*objects(n)) for n in names(apps)}
    h = make_harness(tmp_path, clock, files)
    h.store.create_all(
        (obj for n in names(apps)
         for obj in [application(n, h.remote.url, path=f"apps/{n}"),
                     *prepare_desired(objects(n), app=n, namespace="demo")]),
        field_manager="test",
    )
    work = Work()
    renders = CountingRenders(max_entries=64)
    renders.work = work
    h.reader.render_cache = renders
    controller = CountingController(
        store=h.store, clusters=ClusterRegistry(h.store), sources=h.reader, clock=clock
    )
    controller.work = work
    manager = Manager(h.store, clock, resync_seconds=30.0)  # the engine's default
    manager.register(ApplicationSteps(controller, h.store, apps_namespace=APPS_NS))
    watcher = SourceWatchSteps(controller, h.reader, h.store)
    watcher.watches = (("v1", "Namespace"), (APP_API_VERSION, "Application"))
    manager.register(watcher)
    count_store(h.store, work, monkeypatch)
    return h, work, manager


def run_for(manager: Manager, clock: VirtualClock, seconds: float) -> None:
    async def loop() -> None:
        for _ in range(int(seconds / 0.5)):
            await manager.run_once()
            clock.advance(0.5)

    asyncio.run(loop())


@dataclass(frozen=True)
class CommitCost:
    apps: int
    renders: dict[str, int]
    changed_app: tuple[int, int, int, int]  # calls, objects read, writes, SQLite steps
    others: tuple[int, int, int]  # calls, objects read, writes: every other app's together
    others_reconciled: int
    other_steps: int
    outside_calls: int


def commit_cost(tmp_path: Path, apps: int, monkeypatch: pytest.MonkeyPatch) -> CommitCost:
    h, work, manager = fleet(tmp_path / str(apps), apps, monkeypatch)
    changed = names(apps)[7]
    run_for(manager, h.clock, 10)  # the first pass, and the echoes of its status writes
    assert all(h.status(n)["sync"]["status"] == "Synced" for n in names(apps))
    work.clear()

    sha = h.remote.commit({f"apps/{changed}/all.yaml": manifests(*objects(changed, "off"))})
    run_for(manager, h.clock, 5)

    assert (h.status(changed)["sync"]["revision"], h.status(changed)["sync"]["status"]) == (
        sha, "OutOfSync")
    assert work.reconciles == Counter(dict.fromkeys(names(apps), 1))
    return CommitCost(
        apps=apps,
        renders=dict(work.renders),
        changed_app=(work.calls[changed], work.objects_read[changed], work.writes[changed],
                     work.sqlite_steps[changed]),
        others=(work.total(work.calls, but=changed) - work.calls[OUTSIDE],
                work.total(work.objects_read, but=changed) - work.objects_read[OUTSIDE],
                work.total(work.writes, but=changed) - work.writes[OUTSIDE]),
        others_reconciled=work.total(work.reconciles, but=changed),
        other_steps=work.total(work.sqlite_steps, but=changed) - work.sqlite_steps[OUTSIDE],
        outside_calls=work.calls[OUTSIDE],
    )


def test_one_commit_costs_the_changed_app_the_same_in_any_fleet_and_the_rest_linear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, middle, large = (commit_cost(tmp_path, n, monkeypatch) for n in SIZES)

    for cost in (small, middle, large):
        assert cost.renders == {names(cost.apps)[7]: 1}  # only the changed app renders
    # The changed app's reconcile reads, writes and queries the same in every fleet.
    calls, read, writes, steps = small.changed_app
    assert large.changed_app[:3] == (calls, read, writes)
    assert writes == 1  # its status
    assert large.changed_app[3] <= steps * 1.2  # B-tree depth, not fleet size
    # Every other app: the same calls, reads and writes each (one status write), so the
    # totals grow by equal steps between equally spaced fleets.
    for cost in (small, middle, large):
        per_app = [n / cost.others_reconciled for n in cost.others]
        assert per_app == [n / small.others_reconciled for n in small.others]
        assert cost.others[2] == cost.others_reconciled
    assert [m - s for m, s in zip(middle.others, small.others, strict=True)] == [
        g - m for g, m in zip(large.others, middle.others, strict=True)]
    assert large.other_steps / large.others_reconciled <= (
        1.2 * small.other_steps / small.others_reconciled)
    # The source watcher's own work (the list of Applications when it changed) does not
    # grow per app: a few calls, whatever the fleet.
    assert large.outside_calls == small.outside_calls
