"""A watch on a kind nobody writes to is not left behind by other kinds' writes: the store
keeps its newest events only, and a quiet kind's position used to fall out of that history,
so the next poll listed the kind again and queued a step for every one of its objects (at
10,000 apps, after one commit's 10,000 status writes: every app once more, and 200,000
objects read). Its position now moves up to a fresh list's version while it is quiet, and
an event written to it meanwhile is still delivered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import Manager, ObjectKey
from headway.model.obj import Obj


class Recorder:
    name = "recorder"
    watches = (("v1", "ConfigMap"), ("v1", "Secret"))

    def __init__(self) -> None:
        self.mapped: Counter[str] = Counter()  # objects handed to keys_for, by kind

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        self.mapped[obj["kind"]] += 1
        return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["name"])]

    def step(self, key: ObjectKey) -> float | None:
        return None


def obj(kind: str, name: str, value: str = "1") -> Obj:
    field = "data" if kind == "ConfigMap" else "stringData"
    return {"apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "namespace": "default"}, field: {"v": value}}


async def test_a_quiet_kind_is_not_listed_again_after_other_kinds_writes(
    tmp_path: Path,
) -> None:
    clock = VirtualClock()
    store = LocalCluster(tmp_path / "db", clock, event_history=50)
    for i in range(30):
        store.apply(obj("ConfigMap", f"cm-{i}"), field_manager="t")
    manager, recorder = Manager(store, clock, resync_seconds=1e9), Recorder()
    manager.register(recorder)
    await manager.run_once()
    assert recorder.mapped == Counter(ConfigMap=30)

    # 200 Secret writes, four times the history kept, 20 in each 5 s (the store writes at
    # most a few thousand a second, and keeps 10,000)
    for batch in range(10):
        for i in range(20):
            store.apply(obj("Secret", f"s-{i}", str(batch)), field_manager="t")
        await manager.run_once()
        clock.advance(5)
    store.apply(obj("ConfigMap", "cm-7", "2"), field_manager="t")
    await manager.run_once()

    # The Secrets as they came, the one ConfigMap written; the other 29 never again.
    assert recorder.mapped == Counter(ConfigMap=31, Secret=200)


class CountingLists(LocalCluster):
    """The store, counting the one-item lists the manager reads to move a quiet watch up."""

    probes = 0

    def list_page(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if kwargs.get("limit") == 1:
            CountingLists.probes += 1
        return super().list_page(*args, **kwargs)  # type: ignore[arg-type]


async def test_a_quiet_watch_reads_its_one_item_list_once_per_quiet_period(
    tmp_path: Path,
) -> None:
    """Nothing written anywhere: the probe is due every 5 s per watch, not every poll (the
    manager polls ten times a second; probing each time cost 0.47 CPU s per s idle at
    10,000 apps)."""
    clock = VirtualClock()
    store = CountingLists(tmp_path / "db", clock)
    store.apply(obj("ConfigMap", "cm-0"), field_manager="t")
    manager = Manager(store, clock, resync_seconds=1e9)
    manager.register(Recorder())
    await manager.run_once()
    CountingLists.probes = 0
    for _ in range(100):  # 10 s of polls, 0.1 s apart
        clock.advance(0.1)
        await manager.run_once()
    assert CountingLists.probes <= 2 * len(Recorder.watches)
