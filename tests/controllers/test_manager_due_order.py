"""The manager finds a pass's due steps without looking at every queued key: at 10,000 apps
every app's poll-interval look is always queued, and each pass (ten a second when idle)
scanned them all. Counted, not timed: the entries of the queue a pass reads stay the same
with 100 or 5,000 keys waiting. And the steps a pass takes are the ones the scan took (the
longest due first, at most `steps_per_pass` per controller, in (controller, key) order),
checked against that scan over a random sequence of enqueues, steps and clock moves."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import Manager, ObjectKey
from headway.model.obj import Obj


class Steps:
    watches: tuple[tuple[str, str], ...] = ()

    def __init__(self, name: str, taken: list[tuple[str, ObjectKey]], after: float) -> None:
        self.name = name
        self.taken = taken
        self.after = after

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return []

    def step(self, key: ObjectKey) -> float | None:
        self.taken.append((self.name, key))
        return self.after


class CountingQueue(dict[Any, float]):
    """The manager's queue, counting each entry read (a lookup, or one yielded by a scan)."""

    reads = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.reads += 1
        return super().get(key, default)

    def __getitem__(self, key: Any) -> float:
        self.reads += 1
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[Any]:
        for key in super().__iter__():
            self.reads += 1
            yield key

    def items(self) -> Any:
        return [(k, super(CountingQueue, self).__getitem__(k)) for k in self]

    def values(self) -> Any:
        return [super(CountingQueue, self).__getitem__(k) for k in self]


def queue_reads_of_a_pass(tmp_path: Path, waiting: int) -> int:
    clock = VirtualClock()
    manager = Manager(LocalCluster(tmp_path / f"{waiting}.db", clock), clock,
                      resync_seconds=1e9)
    manager.register(Steps("apps", [], after=180.0))
    queue = CountingQueue()
    manager._queue = queue  # the seam: count what a pass reads of it
    for i in range(waiting):
        manager.enqueue("apps", ObjectKey("argocd", f"app-{i:05d}"), 180.0)
    for i in range(3):
        manager.enqueue("apps", ObjectKey("argocd", f"changed-{i}"))
    queue.reads = 0
    assert asyncio.run(manager.run_once()) == 3
    assert manager.next_due() == 180.0
    return queue.reads


def test_a_pass_reads_its_due_keys_not_every_queued_key(tmp_path: Path) -> None:
    assert queue_reads_of_a_pass(tmp_path, 100) == queue_reads_of_a_pass(tmp_path, 5000)


def scan(queue: dict[tuple[str, ObjectKey], float], now: float,
         budget: int) -> list[tuple[str, ObjectKey]]:
    """The selection as the manager made it before: look at every queued key."""
    waiting: dict[str, list[tuple[float, ObjectKey]]] = {}
    for (name, key), when in queue.items():
        if when <= now:
            waiting.setdefault(name, []).append((when, key))
    return sorted((name, key) for name, keys in waiting.items()
                  for _, key in sorted(keys)[:budget])


async def test_the_steps_of_each_pass_are_those_the_scan_took(
    tmp_path: Path, clock: VirtualClock
) -> None:
    rng = random.Random(18)
    manager = Manager(LocalCluster(tmp_path / "db", clock), clock, resync_seconds=1e9,
                      steps_per_pass=7)
    taken: list[tuple[str, ObjectKey]] = []
    for name, after in (("apps", 5.0), ("sources", 0.5), ("rollouts", 2.0)):
        manager.register(Steps(name, taken, after))
    model: dict[tuple[str, ObjectKey], float] = {}
    afters = {"apps": 5.0, "sources": 0.5, "rollouts": 2.0}
    for _ in range(300):
        for _ in range(rng.randrange(6)):
            item = (rng.choice(list(afters)), ObjectKey("ns", f"k{rng.randrange(40):02d}"))
            after = rng.choice([0.0, 0.0, 1.0, 3.0, 7.5])
            manager.enqueue(*item, after)
            due = clock.monotonic() + after
            model[item] = min(due, model.get(item, due))
        expected = scan(model, clock.monotonic(), 7)
        taken.clear()
        await manager.run_once()
        assert taken == expected
        for name, key in expected:
            del model[(name, key)]
            model[(name, key)] = clock.monotonic() + afters[name]
        wait = min(model.values()) - clock.monotonic() if model else None
        assert manager.next_due() == (None if wait is None else max(0.0, wait))
        clock.advance(rng.choice([0.0, 0.5, 1.0, 2.5]))
