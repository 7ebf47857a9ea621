"""Comparison of an Application's desired and live objects: per-resource sync and health,
the app's sync status and health, in Argo CD's status shapes. Purely computational.

Resources are tracked as Argo CD tracks them: the label `app.kubernetes.io/instance: <app>`
(for listing) and the annotation `argocd.argoproj.io/tracking-id:
<app>:<group>/<kind>:<namespace>/<name>` (which app owns it), where `<app>` is the app's
instance name (`instance_name`). Hooks are not compared; a live hook is listed with
`hook: true`. A live object no longer desired that carries
`argocd.argoproj.io/compare-options: IgnoreExtraneous` is OutOfSync and requires pruning,
but does not make the app OutOfSync (so it alone starts no automated sync); a sync that
prunes still deletes it, as in Argo CD.
"""

from __future__ import annotations

import functools
import operator
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, chain
from typing import Any

from headway.diff import AppDiff, CompiledRule, ResourceDiff, diff_resource, unmatched_rules
from headway.health import HealthResult, HealthStatus, worst
from headway.model.argocd_annotations import ignores_extraneous
from headway.model.argocd_diff import CompareOptions
from headway.model.obj import Obj
from headway.sync import hooks
from headway.sync.resources import ResourceKey, is_namespaced, key_of
from headway.sync.waves import wave_of

__all__ = [
    "CONTROL_NAMESPACE",
    "TRACKING_ANNOTATION",
    "TRACKING_LABEL",
    "Comparison",
    "ResourceStatus",
    "compare_app",
    "instance_name",
    "instance_of",
    "owner_of",
    "prepare_desired",
    "same_value",
    "tracking_id",
]

TRACKING_LABEL = "app.kubernetes.io/instance"
TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id"

Assess = Callable[[Obj], HealthResult | None]


# Argo CD's control namespace: its Applications are always served, AppProjects live there.
CONTROL_NAMESPACE = "argocd"


def instance_name(name: str, namespace: str, *, control_namespace: str = CONTROL_NAMESPACE) -> str:
    """The name an Application's resources are tracked by (Argo CD's rule): its name in the
    control namespace, `<namespace>_<name>` elsewhere, so that two same-named Applications in
    two namespaces never claim each other's objects. Kubernetes names never contain `_`."""
    return name if namespace == control_namespace else f"{namespace}_{name}"


def instance_of(instance: str, *, control_namespace: str = CONTROL_NAMESPACE) -> tuple[str, str]:
    """The (namespace, name) of the Application an instance name stands for."""
    namespace, separator, name = instance.partition("_")
    return (namespace, name) if separator else (control_namespace, instance)


def tracking_id(app: str, key: ResourceKey) -> str:
    return f"{app}:{key.group}/{key.kind}:{key.namespace}/{key.name}"


def owner_of(obj: Mapping[str, Any]) -> str | None:
    """The app that manages `obj` by its tracking annotation, else by its instance label."""
    meta = obj.get("metadata") or {}
    annotation = (meta.get("annotations") or {}).get(TRACKING_ANNOTATION)
    if isinstance(annotation, str) and ":" in annotation:
        return annotation.split(":", 1)[0]
    label = (meta.get("labels") or {}).get(TRACKING_LABEL)
    return str(label) if label else None


def prepare_desired(
    objects: Sequence[Obj],
    *,
    app: str,
    namespace: str,
    cluster_scoped: frozenset[tuple[str, str]] = frozenset(),
) -> list[dict[str, Any]]:
    """Desired objects as they will be applied: namespaced kinds without a namespace get the
    destination's, and every object carries the tracking label and annotation.
    `cluster_scoped` adds (group, kind) pairs discovery (or a CRD in the app) says have no
    namespace, beyond the built-in table."""
    out = []
    for obj in objects:
        meta = dict(obj.get("metadata") or {})
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        kind = str(obj.get("kind", ""))
        namespaced = is_namespaced(group, kind) and (group, kind) not in cluster_scoped
        if namespaced and namespace and not meta.get("namespace"):
            meta["namespace"] = namespace
        prepared = {**obj, "metadata": meta}
        key = key_of(prepared)
        meta["labels"] = {**(meta.get("labels") or {}), TRACKING_LABEL: app}
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            TRACKING_ANNOTATION: tracking_id(app, key),
        }
        out.append(prepared)
    return out


@dataclass(frozen=True)
class ResourceStatus:
    """One entry of `status.resources` (Argo CD's ResourceStatus)."""

    key: ResourceKey
    version: str
    status: str  # Synced / OutOfSync
    health: HealthResult | None
    hook: bool = False
    requires_pruning: bool = False
    sync_wave: int = 0
    # A live object needing pruning that carries `compare-options: IgnoreExtraneous`: it is
    # OutOfSync itself, but leaves the app's sync status alone (Argo CD's rule).
    extraneous_ignored: bool = False

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "group": self.key.group,
            "version": self.version,
            "kind": self.key.kind,
            "namespace": self.key.namespace,
            "name": self.key.name,
            "status": self.status,
            "syncWave": self.sync_wave,
        }
        if self.health is not None:
            out["health"] = {"status": str(self.health.status)}
            if self.health.message:
                out["health"]["message"] = self.health.message
        if self.hook:
            out["hook"] = True
        if self.requires_pruning:
            out["requiresPruning"] = True
        return out


@dataclass(frozen=True)
class Comparison:
    resources: tuple[ResourceStatus, ...]
    diffs: Mapping[ResourceKey, ResourceDiff]
    shared: tuple[str, ...] = ()
    desired: tuple[dict[str, Any], ...] = ()
    live: Mapping[ResourceKey, Obj] = field(default_factory=dict)
    # ignoreDifferences entries that match no resource of the app (the no-group trap).
    ignore_warnings: tuple[str, ...] = ()
    # The prepared desired object each compared resource's status and diff come from.
    compared: Mapping[ResourceKey, dict[str, Any]] = field(default_factory=dict)
    # What the next comparison of the app lends from (not part of the result).
    lending: _Lending | None = field(default=None, compare=False, repr=False)

    # Worked out once per comparison (it never changes): a refresh where nothing changed
    # hands back the same comparison, and its report reads both again.
    @functools.cached_property
    def sync_status(self) -> str:
        counted = (r for r in self.resources if not r.hook and not r.extraneous_ignored)
        return "OutOfSync" if any(r.status == "OutOfSync" for r in counted) else "Synced"

    @functools.cached_property
    def health(self) -> HealthResult:
        """The worst health of the app's resources (hooks and kinds without a check
        excluded); its message names the resource that set it."""
        assessed = [r for r in self.resources if r.health is not None and not r.hook]
        status = worst(r.health.status for r in assessed if r.health is not None)
        if status is HealthStatus.HEALTHY:
            return HealthResult(HealthStatus.HEALTHY)
        first = next(r for r in assessed if r.health is not None and r.health.status is status)
        detail = f": {first.health.message}" if first.health and first.health.message else ""
        return HealthResult(status, f"{first.key} is {status}{detail}")

    @property
    def modified(self) -> dict[ResourceKey, bool]:
        return {key: d.modified for key, d in self.diffs.items()}


def compare_app(
    *,
    app: str,
    desired: Sequence[dict[str, Any]],
    live: Sequence[Obj],
    rules: Sequence[CompiledRule] = (),
    assess: Assess,
    known_keys: Iterable[ResourceKey] = (),
    earlier: Comparison | None = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """`desired` as returned by `prepare_desired`; `live` the app's objects in the cluster
    (tracked ones plus any existing object with a desired key). `known_keys` are key objects
    the caller keeps anyway (its live objects' keys): the comparison holds those instead of
    equal copies of its own, one object fewer per resource for the garbage collector.

    `earlier` is a comparison of the same app with the same `rules` and `assess`: a resource
    whose desired object is the same value, type for type, and whose live object is the same
    (the same object, or the same uid and resourceVersion) keeps its diff and status from it
    instead of being compared again (`earlier` must have had the same `options`, argocd-cm's
    compare options, too). A desired object that is the very object `earlier` compared also
    keeps its key and hook flags (pure functions of an object nothing changes), and live
    objects that are the very objects `earlier` read keep their keys and the resources no
    longer desired: a resource lent costs a few lookups."""
    compare = options or CompareOptions()
    lender = _Lender(earlier) if earlier is not None else None
    live_by_key = lender.same_live(live) if lender is not None else None
    same_key: dict[ResourceKey, ResourceKey] | None = None
    if live_by_key is None:
        same_key = {key: key for key in known_keys}
        live_by_key = _keyed(live, same_key)
    resources: list[ResourceStatus] = []
    diffs: dict[ResourceKey, ResourceDiff] = {}
    compared: dict[ResourceKey, dict[str, Any]] = {}
    keys: list[ResourceKey | None] = []
    shared: list[str] = []
    for index, obj in enumerate(desired):
        row = lender.row_of(index, obj) if lender is not None else None
        if lender is not None and row is not None:
            key = lender.key_at(row)
            if key is None:  # a hook or a skipped object
                keys.append(None)
                continue
        elif hooks.is_hook(obj) or hooks.is_skipped(obj):
            keys.append(None)
            continue
        else:
            if same_key is None:  # the live keys, wanted now (their objects are kept)
                same_key = {key: key for key in live_by_key}
            key = key_of(obj)
            key = same_key.get(key, key)
        keys.append(key)
        compared[key] = obj
        current = live_by_key.get(key)
        found = None
        expect_change = False
        if lender is not None:
            found = lender.lent(row, key, current) if row is not None else None
            if found is None or not lender.plain:
                _note_shared(shared, app, key, current)
            if found is None and row is None:
                found = lender.result(key, obj, current)
                expect_change = found is None and lender.compared_with(key, current)
        else:
            _note_shared(shared, app, key, current)
        if found is None:
            diff = diff_resource(obj, current, rules, compare, expect_change=expect_change)
            health = lender.health(key, current) if lender is not None else _UNSET
            found = (diff, _status(key, obj, current, diff, assess=assess, health=health))
        diffs[key] = found[0]
        resources.append(found[1])
    tail = len(resources)
    kept_keys = tuple(keys)
    if lender is None or not lender.add_rest(resources, diffs, kept_keys):
        _add_unwanted(
            resources,
            diffs,
            app=app,
            live_by_key=live_by_key,
            compared=compared,
            rules=rules,
            compare=compare,
            assess=assess,
        )
    unmatched = unmatched_rules(rules, chain(desired, live)) if rules else []
    warnings = AppDiff({}, tuple(unmatched)).warnings()
    lending = _Lending(kept_keys, tail) if len(compared) == len(keys) - keys.count(None) else None
    return Comparison(
        tuple(resources),
        diffs,
        tuple(shared),
        tuple(desired),
        live_by_key,
        warnings,
        compared,
        lending,
    )


def _keyed(live: Sequence[Obj], same_key: dict[ResourceKey, ResourceKey]) -> dict[ResourceKey, Obj]:
    """`live` by key, each key the equal one of `same_key` (which gets the new ones)."""
    live_by_key: dict[ResourceKey, Obj] = {}
    for obj in live:
        key = key_of(obj)
        live_by_key[same_key.setdefault(key, key)] = obj
    return live_by_key


def _add_unwanted(
    resources: list[ResourceStatus],
    diffs: dict[ResourceKey, ResourceDiff],
    *,
    app: str,
    live_by_key: Mapping[ResourceKey, Obj],
    compared: Mapping[ResourceKey, Any],
    rules: Sequence[CompiledRule],
    compare: CompareOptions,
    assess: Assess,
) -> None:
    """The app's live objects no longer desired, in key order: live hooks, and the rest
    to be pruned."""
    for key, current in sorted(live_by_key.items()):
        if key in compared or owner_of(current) != app:
            continue
        if hooks.is_hook(current):
            resources.append(_status(key, current, current, None, assess=assess, hook=True))
            continue
        diffs[key] = diff_resource(None, current, rules, compare)
        status = _status(key, current, current, diffs[key], assess=assess)
        if ignores_extraneous(current.get("metadata") or {}):
            status = replace(status, extraneous_ignored=True)
        resources.append(status)


@dataclass(frozen=True)
class _Lending:
    """What a comparison keeps for the next one to lend from: the key of each desired
    object, position for position (None for a hook or a skipped object), and where the
    resources no longer desired start in `resources`. Not kept when two desired objects
    share a key (the later one's result is the key's)."""

    keys: tuple[ResourceKey | None, ...]
    tail: int


class _Lender:
    """An earlier comparison and what it keeps for lending."""

    def __init__(self, earlier: Comparison) -> None:
        self._earlier = earlier
        self._lending = earlier.lending
        self._rows: list[int] | None = None
        self._positions: dict[int, int] | None = None
        self._reuse: _Reuse | None = None
        self._live_same = False
        # No resource of it was shared with another app: neither is one lent now.
        self.plain = not earlier.shared

    def same_live(self, live: Sequence[Obj]) -> dict[ResourceKey, Obj] | None:
        """`earlier`'s live objects by key, when `live` lists the very same objects in the
        same order (the store has not moved since): their keys are the same."""
        before = self._earlier.live
        if len(live) != len(before) or not all(map(operator.is_, live, before.values())):
            return None
        self._live_same = True
        return dict(before)

    def row_of(self, index: int, obj: dict[str, Any]) -> int | None:
        """Where `earlier` listed the very object `obj` among its desired objects."""
        if self._lending is None:
            return None
        desired = self._earlier.desired
        if index < len(desired) and desired[index] is obj:
            return index
        if self._positions is None:
            self._positions = {id(o): n for n, o in enumerate(desired)}
        return self._positions.get(id(obj))

    def key_at(self, row: int) -> ResourceKey | None:
        assert self._lending is not None
        return self._lending.keys[row]

    def lent(
        self, row: int, key: ResourceKey, live: Obj | None
    ) -> tuple[ResourceDiff, ResourceStatus] | None:
        """`earlier`'s result for the desired object at `row` (with `key`), when its live
        object is the same too."""
        assert self._lending is not None
        if not self._live_same and not _same_live(self._earlier.live.get(key), live):
            return None
        status = self._earlier.resources[self._rows_of(self._lending.keys)[row]]
        return self._earlier.diffs[key], status

    def _rows_of(self, keys: tuple[ResourceKey | None, ...]) -> list[int]:
        if self._rows is None:
            self._rows = list(accumulate((k is not None for k in keys), initial=-1))[1:]
        return self._rows

    def result(
        self, key: ResourceKey, desired: dict[str, Any], live: Obj | None
    ) -> tuple[ResourceDiff, ResourceStatus] | None:
        if self._reuse is None:
            self._reuse = _Reuse(self._earlier)
        return self._reuse.result(key, desired, live)

    def compared_with(self, key: ResourceKey, live: Obj | None) -> bool:
        """Whether `earlier` compared `key` with this same live object (then, when its
        result is not lent, the desired object is what changed)."""
        return key in self._earlier.compared and _same_live(self._earlier.live.get(key), live)

    def health(self, key: ResourceKey, live: Obj | None) -> HealthResult | _Unset | None:
        """`earlier`'s health of `key` while its live object is the same (health reads the
        live object alone; a changed desired object does not change it), else `_UNSET`."""
        if self._reuse is None:
            self._reuse = _Reuse(self._earlier)
        return self._reuse.health(key, live)

    def add_rest(
        self,
        resources: list[ResourceStatus],
        diffs: dict[ResourceKey, ResourceDiff],
        keys: tuple[ResourceKey | None, ...],
    ) -> bool:
        """Add `earlier`'s resources no longer desired, when they are what a comparison would
        find again: the same live objects, and the same keys desired."""
        lending = self._lending
        if lending is None or not self._live_same or keys != lending.keys:
            return False
        rest = self._earlier.resources[lending.tail :]
        for status in rest:
            if not status.hook:
                diffs[status.key] = self._earlier.diffs[status.key]
        resources.extend(rest)
        return True


class _Reuse:
    """Per-resource results of an earlier comparison, and when they still hold."""

    def __init__(self, earlier: Comparison) -> None:
        self._earlier = earlier
        self._statuses = {r.key: r for r in earlier.resources if not r.hook}

    def result(
        self, key: ResourceKey, desired: dict[str, Any], live: Obj | None
    ) -> tuple[ResourceDiff, ResourceStatus] | None:
        before = self._earlier.compared.get(key)
        status = self._statuses.get(key)
        diff = self._earlier.diffs.get(key)
        if before is None or status is None or diff is None:
            return None
        if not _same_live(self._earlier.live.get(key), live) or not same_value(before, desired):
            return None
        return diff, status

    def health(self, key: ResourceKey, live: Obj | None) -> HealthResult | _Unset | None:
        status = self._statuses.get(key)
        if status is None or not _same_live(self._earlier.live.get(key), live):
            return _UNSET
        return status.health


def _note_shared(shared: list[str], app: str, key: ResourceKey, live: Obj | None) -> None:
    owner = owner_of(live) if live is not None else None
    if owner is not None and owner != app:
        shared.append(f"{key.qualified} is part of applications {app} and {owner}")


def _same_live(before: Obj | None, now: Obj | None) -> bool:
    """The same live object: both absent, the same object, or the same uid and
    resourceVersion (the API server gives every change of an object a new one)."""
    if before is None or now is None or before is now:
        return before is now
    was, meta = before.get("metadata") or {}, now.get("metadata") or {}
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    return bool(uid and version) and (uid, version) == (was.get("uid"), was.get("resourceVersion"))


def same_value(before: Any, now: Any) -> bool:
    """Whether two rendered objects are the same value type for type: Python's `==` alone
    takes `true` for `1` and `1` for `1.0`, which compare and show differently. Equal
    pickles rebuild to the same types and values; a value pickle cannot write (or writes
    differently for equal content, e.g. shared references) only loses the reuse."""
    if before is now:
        return True
    if before != now:
        return False
    try:
        return pickle.dumps(before, protocol=5) == pickle.dumps(now, protocol=5)
    except (pickle.PicklingError, TypeError, ValueError, RecursionError, AttributeError):
        return False


class _Unset:
    """No earlier health to keep: `_status` assesses it."""


_UNSET = _Unset()

# Results without a message, shared: a comparison keeps one per resource, and most are these.
_PLAIN_HEALTH = {status: HealthResult(status) for status in HealthStatus}
_MISSING = _PLAIN_HEALTH[HealthStatus.MISSING]


def _status(
    key: ResourceKey,
    obj: Obj,
    current: Obj | None,
    diff: ResourceDiff | None,
    *,
    assess: Assess,
    hook: bool = False,
    health: HealthResult | _Unset | None = _UNSET,
) -> ResourceStatus:
    """`health`, when given, is `current`'s, assessed before."""
    version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    if isinstance(health, _Unset):
        health = _MISSING if current is None else assess(current)
    if type(health) is HealthResult and not health.message:
        health = _PLAIN_HEALTH.get(health.status, health)  # shared: kept once per resource
    synced = diff is None or not diff.modified
    pruning = diff is not None and diff.normalized_desired is None
    return ResourceStatus(
        key=key,
        version=version,
        status="Synced" if synced else "OutOfSync",
        health=health,
        hook=hook,
        requires_pruning=pruning,
        sync_wave=wave_of(obj),
    )
