"""The controller manager: watch-driven queue, dedup, requeue on the clock, back-off."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import Manager, ObjectKey
from headway.model.obj import Obj


class Recorder:
    name = "recorder"
    watches = (("v1", "ConfigMap"),)

    def __init__(self, *, after: float | None = None, fail: int = 0) -> None:
        self.calls: list[ObjectKey] = []
        self.after = after
        self.fail = fail

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["name"])]

    def step(self, key: ObjectKey) -> float | None:
        self.calls.append(key)
        if self.fail:
            self.fail -= 1
            raise RuntimeError("boom")
        return self.after


def _cm(name: str, value: str = "1") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"v": value},
    }


async def test_changes_queue_each_key_once(tmp_path: Path, clock: VirtualClock) -> None:
    cluster = LocalCluster(tmp_path / "db", clock)
    manager, rec = Manager(cluster, clock), Recorder()
    manager.register(rec)
    cluster.apply(_cm("a"), field_manager="t")
    cluster.apply(_cm("a", "2"), field_manager="t")
    cluster.apply(_cm("b"), field_manager="t")
    assert await manager.run_once() == 2
    assert sorted(rec.calls) == [ObjectKey("default", "a"), ObjectKey("default", "b")]
    assert await manager.run_once() == 0


async def test_requeue_after_reads_the_clock(tmp_path: Path, clock: VirtualClock) -> None:
    cluster = LocalCluster(tmp_path / "db", clock)
    manager, rec = Manager(cluster, clock, resync_seconds=1e9), Recorder(after=30)
    manager.register(rec)
    cluster.apply(_cm("a"), field_manager="t")
    await manager.run_once()
    assert manager.next_due() == 30
    clock.advance(29)
    assert await manager.run_once() == 0
    clock.advance(1)
    assert await manager.run_once() == 1


async def test_failures_back_off(tmp_path: Path, clock: VirtualClock) -> None:
    cluster = LocalCluster(tmp_path / "db", clock)
    manager, rec = Manager(cluster, clock, resync_seconds=1e9), Recorder(fail=2)
    manager.register(rec)
    cluster.apply(_cm("a"), field_manager="t")
    await manager.run_once()
    assert manager.next_due() == 1
    clock.advance(1)
    await manager.run_once()
    assert manager.next_due() == 2
    clock.advance(2)
    await manager.run_once()
    assert len(rec.calls) == 3 and manager.next_due() is None


async def test_rollout_controller_through_the_manager(tmp_path: Path, clock: VirtualClock) -> None:
    from rollout_harness import rollout

    from headway.controllers.rollout.controller import RolloutController

    cluster = LocalCluster(tmp_path / "db", clock)
    manager = Manager(cluster, clock)
    manager.register(RolloutController(cluster, clock))
    cluster.apply(rollout(replicas=2), field_manager="t")
    for _ in range(5):
        await manager.run_once()
    sets = cluster.list("apps/v1", "ReplicaSet", namespace="default")
    assert [rs["spec"]["replicas"] for rs in sets] == [2]
    status = cluster.get("argoproj.io/v1alpha1", "Rollout", "web", "default")["status"]
    assert status["stableRS"] == status["currentPodHash"]


async def test_a_watch_behind_the_history_relists(tmp_path: Path, clock: VirtualClock) -> None:
    cluster = LocalCluster(tmp_path / "db", clock)
    manager, rec = Manager(cluster, clock, resync_seconds=1e9), Recorder()
    manager.register(rec)
    cluster.apply(_cm("a"), field_manager="t")
    await manager.run_once()
    cluster.apply(_cm("a", "2"), field_manager="t")
    cluster.apply(_cm("c"), field_manager="t")
    cluster.compact(keep=0)  # the manager's watch position is now Gone (410)
    rec.calls.clear()
    await manager.run_once()
    assert sorted(rec.calls) == [ObjectKey("default", "a"), ObjectKey("default", "c")]


class CountingLists(LocalCluster):
    """The store, counting the lists the manager makes."""

    lists = 0

    def list_page(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        self.lists += 1
        return super().list_page(*args, **kwargs)  # type: ignore[arg-type]


async def test_a_kind_with_no_objects_is_listed_once_then_watched(
    tmp_path: Path, clock: VirtualClock
) -> None:
    cluster = CountingLists(tmp_path / "db", clock)
    cluster.apply({**_cm("elsewhere"), "kind": "Secret", "data": {}}, field_manager="t")
    manager, rec = Manager(cluster, clock), Recorder()  # watches ConfigMaps: none yet
    manager.register(rec)
    for _ in range(5):
        assert await manager.run_once() == 0
    assert cluster.lists == 1
    cluster.apply(_cm("a"), field_manager="t")
    assert await manager.run_once() == 1  # the first ConfigMap arrives by the watch
    assert cluster.lists == 1


class Ticker:
    """A controller with one key stepped every half second (the source watcher's shape)."""

    name = "ticker"
    watches = ()

    def __init__(self) -> None:
        self.calls = 0

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return []

    def step(self, key: ObjectKey) -> float | None:
        self.calls += 1
        return 0.5


async def test_a_pass_takes_a_bounded_number_of_steps_per_controller_so_none_waits_for_all(
    tmp_path: Path, clock: VirtualClock
) -> None:
    cluster = LocalCluster(tmp_path / "db", clock)
    manager = Manager(cluster, clock, resync_seconds=1e9, steps_per_pass=10)
    rec, ticker = Recorder(after=180), Ticker()
    manager.register(rec)
    manager.register(ticker)
    for i in range(25):  # cm-24 due first
        manager.enqueue("recorder", ObjectKey("default", f"cm-{i:02d}"), float(25 - i))
    clock.advance(30)
    manager.enqueue("ticker", ObjectKey("", "tick"))

    passes = []
    for _ in range(3):
        passes.append(await manager.run_once())
        clock.advance(0.5)  # the ticker is due again; the stepped keys are not (180 s)

    assert passes == [11, 11, 6]  # ten of the recorder's and the ticker's one, each pass
    assert ticker.calls == 3
    # The longest due first, and every key once: none starves behind keys due again.
    assert sorted(rec.calls[:10]) == [ObjectKey("default", f"cm-{i:02d}") for i in range(15, 25)]
    assert sorted(rec.calls) == [ObjectKey("default", f"cm-{i:02d}") for i in range(25)]
