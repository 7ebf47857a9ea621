"""A small controller manager: watch-driven work queue, one step per key per call.

Controllers register with `Manager.register(controller)`. A controller names the kinds it
watches, maps a changed object to the keys it must look at again (a ReplicaSet maps to
the Rollout that owns it), and takes one step for a key, returning seconds until it wants
another look (or None). The manager keeps one watch per kind, a queue of (controller, key)
with a due time on the `Clock`'s monotonic time, and deduplicates: a key queued twice runs
once, at the earlier time. A step that raises is logged and retried with back-off
(1 s doubling to 60 s). Every `resync_seconds` each known key is queued again, unless its
controller has a `needs_resync(key)` that says no (the Application controller's settled apps,
whose changes all arrive as watch events).

Steps may be plain or `async` functions (the analysis controller's are). `run_once()` is
one pass (poll watches, run what is due, at most `steps_per_pass` steps per controller) for
tests on a `VirtualClock`; `run(stop)` loops until `stop` is set, sleeping until the next
due time or a watch event.

With `ReconcileTimings`, each step of the Application, Rollout and AnalysisRun controllers is
timed (real seconds: what the step cost, not the clock's time) into Argo's reconcile
histograms, with Argo's buckets: `argocd_app_reconcile{namespace, dest_server}`,
`rollout_reconcile{namespace, name}` and `analysis_run_reconcile{namespace, name}`; a step
that raises also counts in `rollout_reconcile_error` / `analysis_run_reconcile_error`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import inspect
import logging
import time
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from prometheus_client import Counter, Histogram
from prometheus_client.registry import CollectorRegistry

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Gone
from headway.cluster.protocol import Cluster, WatchEventType
from headway.controllers.collector_policy import CollectorPolicy, PassSummary
from headway.model.obj import Obj

__all__ = ["RECONCILE_METRICS", "Manager", "ObjectKey", "ReconcileTimings", "StepController"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class ObjectKey:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class StepController(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def watches(self) -> Sequence[tuple[str, str]]:
        """(apiVersion, kind) pairs whose changes may concern this controller."""
        ...

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        """The keys to look at again because `obj` changed (or was deleted)."""
        ...

    def step(self, key: ObjectKey) -> float | Awaitable[float | None] | None:
        """One step for `key`; seconds until the next wanted look, or None. May be async."""
        ...


#: controller -> (Argo's histogram, its help, its buckets in seconds, its error counter or "")
RECONCILE_METRICS: dict[str, tuple[str, str, tuple[float, ...], str]] = {
    "applications": ("argocd_app_reconcile", "Application reconciliation performance in seconds.",
                     (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0), ""),
    "rollouts": ("rollout_reconcile", "Rollout reconciliation performance.",
                 (0.01, 0.15, 0.25, 0.5, 1.0), "rollout_reconcile_error"),
    "analysisruns": ("analysis_run_reconcile", "Analysis Run reconciliation performance.",
                     (0.01, 0.15, 0.25, 0.5, 1.0), "analysis_run_reconcile_error"),
}


class ReconcileTimings:
    """Argo's reconcile histograms and error counters, fed by the manager's steps."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._histograms: dict[str, Histogram] = {}
        self._errors: dict[str, Counter] = {}
        for controller, (metric, text, buckets, errors) in RECONCILE_METRICS.items():
            labels = ["namespace", "dest_server"] if controller == "applications" else [
                "namespace", "name"]
            self._histograms[controller] = Histogram(
                metric, text, labels, buckets=buckets, registry=registry)
            if errors:
                self._errors[controller] = Counter(
                    errors, f"Errors reconciling ({controller}).", ["namespace", "name"],
                    registry=registry)

    def observe(self, controller: str, key: ObjectKey, *, seconds: float, failed: bool) -> None:
        histogram = self._histograms.get(controller)
        if histogram is None:
            return
        # the step is timed where the Application has not been read: no destination server
        second = "" if controller == "applications" else key.name
        histogram.labels(key.namespace, second).observe(seconds)
        if failed and controller in self._errors:
            self._errors[controller].labels(key.namespace, key.name).inc()


@dataclass
class _Watch:
    api_version: str
    kind: str
    resource_version: str | None = None
    moved_at: float = 0.0  # when its position last moved or was probed (monotonic time)


#: How long a watch may see no event before its position is moved up to a fresh list's
#: version (a bookmark of our own): the store keeps the newest 10,000 events, and a quiet
#: kind's position, left behind by other kinds' writes, expired; the relist then queued a
#: step for every object of the kind (at 10,000 apps, after one commit's status writes,
#: every app again, with 200,000 objects read).
QUIET_WATCH_SECONDS = 5.0


def _later(version: str, than: str) -> bool:
    try:
        return int(version) > int(than)
    except ValueError:  # versions that are not numbers cannot be ordered: keep the position
        return False


class Manager:
    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        resync_seconds: float = 30.0,
        timings: ReconcileTimings | None = None,
        steps_per_pass: int = 100,
    ) -> None:
        self._cluster = cluster
        self._steps_per_pass = steps_per_pass
        self._timings = timings
        self._clock = clock
        self._resync = resync_seconds
        self._controllers: dict[str, StepController] = {}
        self._watches: dict[tuple[str, str], _Watch] = {}
        self._queue: dict[tuple[str, ObjectKey], float] = {}
        # Per controller, (due, key) in due order; an entry whose due time is no longer the
        # queue's (the key was stepped, or queued again earlier) is skipped when it surfaces.
        # A pass then costs its own steps, not a look at every queued key (at 10,000 apps,
        # each one's poll-interval look is always queued).
        self._due_order: dict[str, list[tuple[float, ObjectKey]]] = {}
        self._failures: dict[tuple[str, ObjectKey], int] = {}
        self._known: set[tuple[str, ObjectKey]] = set()
        self._last_resync = clock.monotonic()

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(self._controllers)

    def controller(self, name: str) -> StepController:
        """The controller registered as `name`."""
        try:
            return self._controllers[name]
        except KeyError:
            known = ", ".join(self._controllers) or "none"
            raise KeyError(f"no controller named {name!r} (registered: {known})") from None

    def register(self, controller: StepController) -> None:
        if controller.name in self._controllers:
            raise ValueError(f"a controller named {controller.name!r} is already registered")
        self._controllers[controller.name] = controller
        bind_queue = getattr(controller, "bind_queue", None)
        if bind_queue is not None:  # a controller that hands keys to another's queue
            bind_queue(self.enqueue)
        for api_version, kind in controller.watches:
            self._watches.setdefault((api_version, kind), _Watch(api_version, kind))

    def enqueue(self, controller: str, key: ObjectKey, after: float = 0.0) -> None:
        due = self._clock.monotonic() + max(0.0, after)
        item = (controller, key)
        self._known.add(item)
        queued = self._queue.get(item)
        if queued is not None and queued <= due:
            return
        self._queue[item] = due
        heap = self._due_order.setdefault(controller, [])
        heapq.heappush(heap, (due, key))
        if len(heap) > 2 * len(self._queue) + 64:  # mostly superseded entries: rebuild
            self._rebuild_due_order()

    def _rebuild_due_order(self) -> None:
        self._due_order = {}
        for (name, key), when in self._queue.items():
            self._due_order.setdefault(name, []).append((when, key))
        for heap in self._due_order.values():
            heapq.heapify(heap)

    def _events(self, watch: _Watch) -> list[Obj]:
        if watch.resource_version is None:
            return self._relist(watch)
        floor = self._quiet_floor(watch)  # read before the watch: no event can fall between
        try:
            events = list(
                self._cluster.watch(
                    watch.api_version, watch.kind, resource_version=watch.resource_version
                )
            )
        except Gone:
            return self._relist(watch)
        for event in events:
            watch.resource_version = event.resource_version
        if events or (floor is not None and _later(floor, watch.resource_version)):
            watch.resource_version = watch.resource_version if events else floor
            watch.moved_at = self._clock.monotonic()
        return [e.object for e in events if e.type in WatchEventType]

    def _quiet_floor(self, watch: _Watch) -> str | None:
        """For a watch quiet for `QUIET_WATCH_SECONDS`, the version of a one-item list of
        its kind: no event of the kind up to it is unread once the watch, read after it,
        brings none."""
        now = self._clock.monotonic()
        if now - watch.moved_at < QUIET_WATCH_SECONDS:
            return None
        watch.moved_at = now  # probed: the next look is one quiet period on, moved or not
        try:
            return self._cluster.list_page(watch.api_version, watch.kind,
                                           limit=1).resource_version or None
        except ClusterError:
            return None

    def _relist(self, watch: _Watch) -> list[Obj]:
        """Every current object, and the list's version to watch from: a kind with no
        objects yet is then watched too, not listed again on every poll."""
        items: list[Obj] = []
        version, token = "", None
        while True:
            page = self._cluster.list_page(watch.api_version, watch.kind, limit=500,
                                           continue_token=token)
            version = version or page.resource_version
            items += page.items
            token = page.continue_token or None
            if token is None:
                break
        watch.resource_version = version if version not in ("", "0") else None
        watch.moved_at = self._clock.monotonic()
        return items

    def poll(self) -> int:
        """Read new watch events and queue the keys they concern; returns how many objects."""
        seen = 0
        for (api_version, kind), watch in self._watches.items():
            for obj in self._events(watch):
                seen += 1
                for name, controller in self._controllers.items():
                    if (api_version, kind) in controller.watches:
                        for key in self._keys(controller, obj):
                            self.enqueue(name, key)
        if self._clock.monotonic() - self._last_resync >= self._resync:
            self._last_resync = self._clock.monotonic()
            for name, key in self._known:
                wanted = getattr(self._controllers[name], "needs_resync", None)
                if wanted is None or wanted(key):
                    self.enqueue(name, key)
        return seen

    @staticmethod
    def _keys(controller: StepController, obj: Obj) -> list[ObjectKey]:
        try:
            return list(controller.keys_for(obj))
        except Exception:
            log.exception("%s: cannot map %s to keys", controller.name, obj.get("kind"))
            return []

    def next_due(self) -> float | None:
        """Seconds until the earliest queued step (0 when one is due), or None."""
        earliest = [heap[0][0] for name, heap in self._due_order.items()
                    if self._drop_superseded(name, heap)]
        if not earliest:
            return None
        return max(0.0, min(earliest) - self._clock.monotonic())

    def _drop_superseded(self, name: str, heap: list[tuple[float, ObjectKey]]) -> bool:
        """Pop superseded entries off the top of `name`'s due order; whether one is left."""
        while heap and self._queue.get((name, heap[0][1])) != heap[0][0]:
            heapq.heappop(heap)
        return bool(heap)

    async def _step(self, name: str, key: ObjectKey) -> None:
        item = (name, key)
        started = time.perf_counter()
        try:
            result = self._controllers[name].step(key)
            after = await result if inspect.isawaitable(result) else result
        except Exception:
            self._timed(name, key, started, failed=True)
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
            log.exception("%s: step for %s failed (attempt %d)", name, key, failures)
            self.enqueue(name, key, min(60.0, 2.0 ** (failures - 1)))
            return
        self._timed(name, key, started, failed=False)
        self._failures.pop(item, None)
        if after is not None:
            self.enqueue(name, key, after)

    def _timed(self, name: str, key: ObjectKey, started: float, *, failed: bool) -> None:
        if self._timings is not None:
            seconds = time.perf_counter() - started
            self._timings.observe(name, key, seconds=seconds, failed=failed)

    async def run_once(self) -> int:
        """Poll the watches, then take one step for each key that is due, at most
        `steps_per_pass` per controller (the longest due first); returns the steps. The rest
        stay due for the next pass, which polls first: a controller's step (the source
        watcher's half-second look for commits) or a watch event waits behind at most that
        many steps of another, not behind a whole fleet's periodic refreshes (at 3,000 apps
        a commit once waited 30 s behind the poll interval's due apps)."""
        self.poll()
        due = self._take_due(self._clock.monotonic())
        for name, key in due:
            await self._step(name, key)
        return len(due)

    def _take_due(self, now: float) -> list[tuple[str, ObjectKey]]:
        """This pass's steps, taken off the queue, in (controller, key) order: per
        controller, the keys due longest (ties by key), at most `steps_per_pass`."""
        chosen: list[tuple[str, ObjectKey]] = []
        for name, heap in self._due_order.items():
            taken = 0
            while taken < self._steps_per_pass and self._drop_superseded(name, heap):
                when, key = heap[0]
                if when > now:
                    break
                heapq.heappop(heap)
                del self._queue[(name, key)]  # any other entry for it is now superseded
                chosen.append((name, key))
                taken += 1
        return sorted(chosen)

    def pass_summary(self, steps: int) -> PassSummary:
        """What a pass that took `steps` steps leaves, for the collector policy."""
        return PassSummary(steps=steps, keys=len(self._known), caught_up=self.next_due() != 0.0)

    async def run(
        self,
        stop: asyncio.Event,
        *,
        poll_seconds: float = 0.1,
        collector: CollectorPolicy | None = None,
    ) -> None:
        """Pass after pass until `stop` is set; with `collector` (`headway serve`'s garbage
        collector policy), its `started()` first and its `after_pass()` after every pass."""
        if collector is not None:
            collector.started()
        while not stop.is_set():
            steps = await self.run_once()
            if collector is not None:
                collector.after_pass(self.pass_summary(steps))
            wait = self.next_due()
            wait = poll_seconds if wait is None else min(wait, poll_seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=max(wait, 0.01))
