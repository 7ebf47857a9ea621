"""When Python's garbage collector runs in `headway serve`, a process that lives for weeks.

CPython's cyclic collector starts by allocation counts: a young collection every 700 new
container objects, and a full one (every tracked object) once enough survived. A controller's
heap is mostly long-lived caches - rendered manifests, live objects, comparisons, hundreds of
thousands of dicts at 1,000 Applications - that a full collection walks and never frees (they
hold no cycles that die). A commit's few new long-lived objects then set off such a walk in
the middle of the next refresh pass: the spread of "what a commit costs every other app" in
bench/bench_refresh.py, from nothing to several cold apps' worth.

The policy, applied by the serve loop (`Manager.run(collector=...)`):

  start-up         collect once, then freeze what is left (modules, classes, the engine):
                   no collection walks it again
  first full pass  as many steps as there are keys and nothing left due: the caches now
                   hold the fleet; collect and freeze again
  later passes     at each further full pass, look at what survived since the last freeze
                   (generation 2 outside the frozen set); once it reaches a quarter of the
                   frozen objects, unfreeze, collect everything, freeze again

The last step is what keeps freezing from leaking: a frozen object freed by its reference
count goes at once, but one in a cycle that died stays until the next full collection - which
the re-freeze is, at a quarter's growth, the same ratio as CPython's own full collections.
The young threshold is raised (700 -> `YOUNG_THRESHOLD`): a refresh allocates thousands of
short-lived dicts that reference counting frees, and each young collection walked them all.

Deciding is pure (`refreeze_due`); `PythonCollector` is the one edge that calls `gc`, and
no clock is read: the serve loop says what a pass did. `headway serve --no-tune-gc` turns the
policy off (CPython's defaults); an embedding program chooses by passing a policy or not.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "REFREEZE_RATIO",
    "YOUNG_THRESHOLD",
    "CollectorPolicy",
    "GarbageCollector",
    "PassSummary",
    "PythonCollector",
    "refreeze_due",
]

#: Allocations (net, of container objects) between young collections; CPython's is 700.
YOUNG_THRESHOLD = 10_000

#: Objects that survived since the last freeze, as a share of the frozen ones, that make a
#: full pass re-freeze (CPython runs a full collection at the same share of growth).
REFREEZE_RATIO = 0.25


class GarbageCollector(Protocol):
    """What the policy does to the collector: the `gc` module, or a fake in tests."""

    def collect(self) -> None: ...

    def freeze(self) -> None: ...

    def unfreeze(self) -> None: ...

    def frozen(self) -> int:
        """Objects in the frozen (permanent) generation."""
        ...

    def survivors(self) -> int:
        """Objects in the oldest generation outside the frozen one."""
        ...

    def set_young_threshold(self, allocations: int) -> None: ...


class PythonCollector:
    """The process's own collector."""

    def collect(self) -> None:
        gc.collect()

    def freeze(self) -> None:
        gc.freeze()

    def unfreeze(self) -> None:
        gc.unfreeze()

    def frozen(self) -> int:
        return gc.get_freeze_count()

    def survivors(self) -> int:
        return len(gc.get_objects(generation=2))

    def set_young_threshold(self, allocations: int) -> None:
        _, middle, oldest = gc.get_threshold()
        gc.set_threshold(allocations, middle, oldest)


@dataclass(frozen=True)
class PassSummary:
    """One pass of the serve loop: the steps it took, the keys the loop knows, and whether
    nothing was left due after it."""

    steps: int
    keys: int
    caught_up: bool


def refreeze_due(*, survivors: int, frozen: int, ratio: float = REFREEZE_RATIO) -> bool:
    """Whether a full pass after the first should unfreeze, collect and freeze again: once
    what survived since the last freeze outgrows `ratio` of what is frozen. Purely
    computational."""
    return survivors > frozen * ratio


class CollectorPolicy:
    """The serve loop calls `started()` once, then `after_pass()` after every pass.
    `freezes` and `refreezes` count what was done, for tests and benchmarks."""

    def __init__(
        self, collector: GarbageCollector | None = None, *, young_threshold: int = YOUNG_THRESHOLD
    ) -> None:
        self._gc = collector if collector is not None else PythonCollector()
        self._young_threshold = young_threshold
        self._steps = 0  # since the last full pass
        self._started = False
        self._first_pass_frozen = False
        self.freezes = 0  # every freeze: at start-up, after the first full pass, re-freezes
        self.refreezes = 0

    def started(self) -> None:
        """At start-up, before the first pass; once (a loop run again does nothing more)."""
        if self._started:
            return
        self._started = True
        self._gc.set_young_threshold(self._young_threshold)
        self._freeze()

    def after_pass(self, summary: PassSummary) -> None:
        """Counts the pass's steps; at a full pass (as many steps as keys since the last one,
        and nothing due) freezes the first time, and later re-freezes when `refreeze_due`.
        With no keys at all the first pass is full (nothing will fill the caches), and a
        later one takes a step (an idle loop does not look at the heap ten times a second)."""
        self._steps += summary.steps
        wanted = summary.keys if not self._first_pass_frozen else max(summary.keys, 1)
        if not summary.caught_up or self._steps < wanted:
            return
        self._steps = 0
        if not self._first_pass_frozen:
            self._first_pass_frozen = True
            self._freeze()
        elif refreeze_due(survivors=self._gc.survivors(), frozen=self._gc.frozen()):
            self._gc.unfreeze()
            self._freeze()
            self.refreezes += 1

    def _freeze(self) -> None:
        self._gc.collect()  # what is garbage now is not frozen with the rest
        self._gc.freeze()
        self.freezes += 1
