"""A refresh of one Application: render (through the render cache), read live, compare -
with the comparison itself cached, so a refresh where neither Git content nor any live
object changed costs a few lookups instead of a diff of every resource.

The comparison cache key is the app, the desired state's fingerprint (content ids of the
trees it was rendered from), the `ignoreDifferences` rules, and the uid and
resourceVersion of every live object (the identity a `LiveObjects` read carries, worked out
once per read of the store rather than at every refresh); health is assessed inside the
comparison from the same live objects, so it is covered too. On a miss, the app's last
comparison lends the results of every resource whose desired object and live object did not
change (`compare_app(earlier=...)`), when the rules and the health assessment are the same.
A rendered object the renderer hands back unchanged (the very dict: a document of a file the
commit did not touch) keeps what was prepared from it, so that resource is lent on identity
rather than after comparing two equal values.

Except health that may change with time alone (a live object whose health script can read the
clock, `HealthRegistry.reads_clock`): a comparison holding one is made again at every refresh
and lends nothing (Argo CD assesses health at every reconcile).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Conflict
from headway.cluster.protocol import Cluster
from headway.controllers.app.live import LiveIdentity, LiveObjects, live_identity
from headway.controllers.app.names import REFRESH_ANNOTATION
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.controllers.app.sync_tasks_io import FIELD_MANAGER
from headway.diff import CompiledRule
from headway.model.argocd_diff import CompareOptions
from headway.model.obj import Obj
from headway.sync.comparison import Assess, Comparison, compare_app, prepare_desired
from headway.sync.resources import ResourceKey

_DEFAULT_OPTIONS = CompareOptions()

__all__ = [
    "REFRESH_ANNOTATION",
    "ComparisonCache",
    "Refresh",
    "requested_refresh",
    "take_refresh_request",
]

# REFRESH_ANNOTATION (Argo CD's request for a refresh) is removed by the controller once done:
# `normal` reads the repositories now instead of at the next poll; `hard` also renders again
# without caches. It lives in `names` so the CLI can write it without importing this module.


def requested_refresh(raw: Mapping[str, Any]) -> str | None:
    """`normal`, `hard` or None; any other value is read as `normal`, as Argo CD does."""
    annotations = (raw.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(REFRESH_ANNOTATION)
    if value is None:
        return None
    return "hard" if value == "hard" else "normal"


LiveRead = Callable[[Sequence[Mapping[str, Any]]], Mapping[ResourceKey, Obj]]


@dataclass(frozen=True)
class Refresh:
    desired: tuple[dict[str, Any], ...]
    comparison: Comparison
    # A health in it may change with time alone (a script reading the clock): the
    # comparison is made again at every refresh instead of being reused or lent.
    reads_clock: bool = False


@dataclass(frozen=True)
class _Latest:
    """Where an app's last comparison is in the cache, and what its per-resource results
    depend on besides the desired and live objects (the rules and options are part of the
    key)."""

    key: Any
    rules_identity: str
    options: CompareOptions
    assess: Assess
    clock_kinds: Callable[[Obj], bool]


@dataclass(frozen=True)
class _Prepared:
    """An app's last preparation: the rendered objects (held, so that no other object can
    take one's id while it is kept) and what `prepare_desired` made of each."""

    objects: tuple[Obj, ...]
    prepared: tuple[dict[str, Any], ...]
    namespace: str
    cluster_scoped: frozenset[tuple[str, str]]


def _inputs(latest: _Latest) -> tuple[str, CompareOptions, Assess, Callable[[Obj], bool]]:
    """What a comparison's per-resource results (and its `reads_clock`) depend on besides
    the two objects."""
    return latest.rules_identity, latest.options, latest.assess, latest.clock_kinds


def _identity_of(live: Mapping[ResourceKey, Obj]) -> LiveIdentity:
    """The identity a `LiveObjects` read carries, or (any other mapping) worked out now."""
    return live.identity if isinstance(live, LiveObjects) else live_identity(live)


class ComparisonCache:
    """An LRU of comparisons; `hits` and `misses` for tests and benchmarks."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._max = max_entries
        self._entries: OrderedDict[Any, Refresh] = OrderedDict()
        self._prepared: dict[Any, tuple[dict[str, Any], ...]] = {}
        self._last_prepared: dict[str, _Prepared] = {}
        self._latest: dict[str, _Latest] = {}
        self.hits = 0
        self.misses = 0

    def forget(self, app: str) -> None:
        """Drop every comparison of `app` (a hard refresh compares afresh)."""
        for key in [k for k in self._entries if k[0] == app]:
            del self._entries[key]
        for key in [k for k in self._prepared if k[0] == app]:
            del self._prepared[key]
        self._latest.pop(app, None)
        self._last_prepared.pop(app, None)

    def refresh(
        self,
        *,
        app: str,
        namespace: str,
        desired_state: DesiredState,
        rules: Sequence[CompiledRule],
        rules_identity: str,
        read_live: LiveRead,
        assess: Assess,
        clock_kinds: Callable[[Obj], bool],
        cluster_scoped: frozenset[tuple[str, str]] = frozenset(),
        options: CompareOptions | None = None,
    ) -> Refresh:
        """`clock_kinds` says which live objects' health may change with time alone
        (`HealthRegistry.reads_clock`; required, so that no caller caches such health by
        forgetting it): an app holding one is compared again at every refresh and lends
        nothing."""
        desired = self._prepare(app, namespace, desired_state, cluster_scoped)
        live = read_live(desired)
        compare = options or _DEFAULT_OPTIONS
        key = (app, desired_state.fingerprint, rules_identity, compare, _identity_of(live))
        cached = self._entries.get(key) if desired_state.fingerprint else None
        if cached is not None and not cached.reads_clock:
            self.hits += 1
            self._entries.move_to_end(key)
            return cached
        self.misses += 1
        latest = _Latest(key, rules_identity, compare, assess, clock_kinds)
        earlier = self._earlier(app, latest)
        comparison = compare_app(
            app=app,
            desired=desired,
            live=list(live.values()),
            rules=rules,
            assess=assess,
            known_keys=live.keys(),
            earlier=earlier,
            options=compare,
        )
        # The live objects `earlier` was made from again: none of them reads the clock.
        same_live = earlier is not None and self._latest[app].key[-1] is key[-1]
        reads_clock = not same_live and any(clock_kinds(obj) for obj in live.values())
        if len(self._latest) > self._max and app not in self._latest:
            self._latest.clear()
        self._latest[app] = latest
        result = Refresh(desired, comparison, reads_clock)
        self._entries[key] = result
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return result

    def _earlier(self, app: str, now: _Latest) -> Comparison | None:
        """The app's last comparison, while the cache holds it (so that lending keeps no
        comparison alive the cache let go), if it was made under the same rules, compare
        options and health assessment as `now`."""
        latest = self._latest.get(app)
        if latest is None or _inputs(latest) != _inputs(now):
            return None
        entry = self._entries.get(latest.key)
        return entry.comparison if entry is not None and not entry.reads_clock else None

    def _prepare(
        self,
        app: str,
        namespace: str,
        desired_state: DesiredState,
        cluster_scoped: frozenset[tuple[str, str]],
    ) -> tuple[dict[str, Any], ...]:
        key = (app, namespace, desired_state.fingerprint, cluster_scoped)
        prepared = self._prepared.get(key) if desired_state.fingerprint else None
        if prepared is None:
            objects = desired_state.objects
            prepared = self._prepare_anew(
                app, objects, namespace=namespace, cluster_scoped=cluster_scoped
            )
            if len(self._prepared) > self._max:
                self._prepared.clear()
            self._prepared[key] = prepared
        return prepared

    def _prepare_anew(
        self,
        app: str,
        objects: Sequence[Obj],
        *,
        namespace: str,
        cluster_scoped: frozenset[tuple[str, str]],
    ) -> tuple[dict[str, Any], ...]:
        """`prepare_desired` of `objects`, except that a rendered object which is the very
        object of the app's last preparation (a document of a file the commit did not change
        is kept, not parsed again) takes the prepared object made from it then: the same
        input under the same app, namespace and scoping. The comparison then finds it
        identical to the one it compared last time and lends its result without comparing
        the two values."""
        last = self._last_prepared.get(app)
        earlier: dict[int, dict[str, Any]] = {}
        if last is not None and (last.namespace, last.cluster_scoped) == (
            namespace,
            cluster_scoped,
        ):
            earlier = {id(obj): done for obj, done in zip(last.objects, last.prepared, strict=True)}
        made: list[dict[str, Any]] = []
        for obj in objects:
            kept = _taken(earlier, obj)
            if kept is None:
                [kept] = prepare_desired(
                    [obj], app=app, namespace=namespace, cluster_scoped=cluster_scoped
                )
            made.append(kept)
        prepared = tuple(made)
        if len(self._last_prepared) > self._max and app not in self._last_prepared:
            self._last_prepared.clear()
        self._last_prepared[app] = _Prepared(tuple(objects), prepared, namespace, cluster_scoped)
        return prepared


def _taken(earlier: dict[int, dict[str, Any]], obj: Obj) -> dict[str, Any] | None:
    """The prepared object made from `obj` last time, once (an object listed twice is
    prepared afresh the second time, as before)."""
    return earlier.pop(id(obj), None)


def take_refresh_request(
    raw: dict[str, Any], *, store: Cluster, sources: SourceReader, comparisons: ComparisonCache
) -> dict[str, Any]:
    """Honour `argocd.argoproj.io/refresh` on an Application (normal: read Git now; hard:
    also render and compare without caches), then remove it, as Argo CD does, so a client
    waiting for it to go knows the status it reads next was computed afterwards."""
    requested = requested_refresh(raw)
    if requested is None:
        return raw
    name = str(raw["metadata"]["name"])
    sources.refresh(name, raw, hard=requested == "hard")
    if requested == "hard":
        comparisons.forget(name)
    meta = dict(raw["metadata"])
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(REFRESH_ANNOTATION, None)
    meta["annotations"] = annotations
    body = {k: v for k, v in raw.items() if k != "status"}
    try:
        return dict(store.update({**body, "metadata": meta}, field_manager=FIELD_MANAGER))
    except Conflict:
        return raw  # changed meanwhile: the annotation is taken on the next step
