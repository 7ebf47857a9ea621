"""Differential: a sequence of edits through the comparison cache, each refresh's comparison
equal to a fresh `compare_app` without an earlier one.

The cache lends an earlier comparison's per-resource results on object identity: a desired
object that is the very object compared last time keeps its key, hook flags and result, and
live objects that are the very objects read last time keep their keys and the resources no
longer desired. Each step below changes one thing (desired, live, both, a resource added or
removed, a hook, the ignoreDifferences rules, a health script that reads the clock, a key
listed twice, a resource another app tracks); objects it does not change are the same dicts,
as the renderer and the live reader hand them back.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from headway.clock import VirtualClock
from headway.controllers.app.live import LiveObjects
from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState
from headway.diff import CompiledRule
from headway.diff.ignore import compile_rules
from headway.health.lua_script import LuaHealthScript
from headway.health.registry import HealthRegistry
from headway.model.application import IgnoreDifferences
from headway.sync.comparison import TRACKING_ANNOTATION, compare_app, prepare_desired
from headway.sync.resources import ResourceKey, key_of

APP = "shop"
BY_CLOCK = """
local hs = {}
if os.time() > 100 then hs.status = "Degraded" else hs.status = "Healthy" end
return hs
"""


def _web(name: str, image: str = "web:1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
        "spec": {
            "replicas": 2,
            "template": {"spec": {"containers": [{"name": "web", "image": image}]}},
        },
    }


def _config(name: str, value: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"a": value},
    }


def _hook(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never"}}},
    }


def _live(prepared: dict[str, Any], version: int, *, ready: int = 2) -> dict[str, Any]:
    meta = {**prepared["metadata"], "uid": f"uid-{prepared['metadata']['name']}"}
    live = {**prepared, "metadata": {**meta, "resourceVersion": str(version)}}
    if prepared["kind"] == "Deployment":
        live["status"] = {
            "replicas": 2,
            "updatedReplicas": 2,
            "readyReplicas": ready,
            "availableReplicas": ready,
        }
    return live


class _World:
    """The rendered objects, the live store and the rules of one app, edited step by step."""

    def __init__(self) -> None:
        self.objects: list[dict[str, Any]] = [
            _web("a"),
            _web("b"),
            _web("c"),
            _config("settings"),
            _hook("migrate"),
            {
                **_config("skipped"),
                "metadata": {"name": "skipped", "annotations": {"argocd.argoproj.io/hook": "Skip"}},
            },
        ]
        prepared = prepare_desired(self.objects, app=APP, namespace="shop")
        self.live: dict[ResourceKey, dict[str, Any]] = {
            key_of(o): _live(o, 1) for o in prepared[:4]
        }
        stale = _live(prepare_desired([_config("stale")], app=APP, namespace="shop")[0], 1)
        ran = _live(prepare_desired([_hook("ran")], app=APP, namespace="shop")[0], 1)
        self.live[key_of(stale)] = stale
        self.live[key_of(ran)] = ran
        self.rules: tuple[CompiledRule, ...] = ()
        self.rules_identity = ""
        self.step = 0

    def set_live(self, name: str, change: Callable[[dict[str, Any]], None]) -> None:
        key = next(k for k in self.live if k.name == name)
        obj = copy.deepcopy(self.live[key])
        change(obj)
        obj["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        self.live = {**self.live, key: obj}


def _refresh(cache: ComparisonCache, world: _World, registry: HealthRegistry) -> None:
    world.step += 1
    read = LiveObjects(world.live)
    state = DesiredState(
        objects=tuple(world.objects), revisions=("c0ffee",), fingerprint=f"tree-{world.step}"
    )

    def read_live(_desired: Sequence[dict[str, Any]]) -> LiveObjects:
        return LiveObjects(read, read.identity)  # a copy of the read, as the reader hands out

    result = cache.refresh(
        app=APP,
        namespace="shop",
        desired_state=state,
        rules=world.rules,
        rules_identity=world.rules_identity,
        read_live=read_live,
        assess=registry.assess,
        clock_kinds=registry.reads_clock,
    )
    fresh = compare_app(
        app=APP,
        desired=prepare_desired(world.objects, app=APP, namespace="shop"),
        live=list(world.live.values()),
        rules=world.rules,
        assess=registry.assess,
    )
    got = result.comparison
    assert got == fresh, f"step {world.step}"
    assert repr(got) == repr(fresh)  # types too (`1` and `True` are equal)
    assert [r.to_status() for r in got.resources] == [r.to_status() for r in fresh.resources]
    assert (got.sync_status, got.health) == (fresh.sync_status, fresh.health)


def _edits(world: _World, clock: VirtualClock) -> list[Callable[[], None]]:
    def desired_change() -> None:
        world.objects[0] = _web("a", "web:2")

    def live_change() -> None:
        world.set_live("b", lambda o: o["status"].update(readyReplicas=1, availableReplicas=1))

    def both() -> None:
        world.objects[2] = _web("c", "web:3")
        world.set_live("c", lambda o: o["spec"].update(replicas=3))

    def added() -> None:
        world.objects.insert(1, _config("extra"))

    def removed() -> None:
        del world.objects[3]  # settings: its live object stays, to be pruned

    def hook_added() -> None:
        world.objects.insert(0, _hook("seed"))

    def rules_change() -> None:
        entry = IgnoreDifferences("apps", "Deployment", None, None, ("/spec/replicas",), (), ())
        world.rules = compile_rules([entry])
        world.rules_identity = "replicas"

    def live_added() -> None:
        obj = _live(prepare_desired([_config("extra")], app=APP, namespace="shop")[0], 1)
        world.live = {**world.live, key_of(obj): obj}

    def clock_moves() -> None:
        clock.advance(1000)

    def listed_twice() -> None:
        world.objects.append(_web("a", "web:9"))

    def shared() -> None:
        key = next(k for k in world.live if k.name == "extra")
        note = {TRACKING_ANNOTATION: "other:/ConfigMap:shop/extra"}
        world.set_live(key.name, lambda o: o["metadata"].update(annotations=note))

    def unlisted_again() -> None:
        world.objects.pop()

    nothing = lambda: None  # noqa: E731
    return [
        nothing,
        desired_change,
        nothing,
        live_change,
        both,
        nothing,
        added,
        removed,
        nothing,
        hook_added,
        rules_change,
        nothing,
        live_added,
        clock_moves,
        nothing,
        listed_twice,
        nothing,
        shared,
        nothing,
        unlisted_again,
        nothing,
    ]


def test_each_refresh_equals_a_fresh_comparison() -> None:
    clock = VirtualClock(datetime(1970, 1, 1, tzinfo=UTC))
    registry = HealthRegistry(clock=clock).with_scripts(
        {("", "ConfigMap"): LuaHealthScript(BY_CLOCK, "test")}
    )
    world, cache = _World(), ComparisonCache()
    for edit in [lambda: None, *_edits(world, clock)]:
        edit()
        _refresh(cache, world, registry)


def test_each_refresh_equals_a_fresh_comparison_without_clock_scripts() -> None:
    """The same edits where no health reads the clock, so every step may lend."""
    clock = VirtualClock(datetime(1970, 1, 1, tzinfo=UTC))
    registry = HealthRegistry(clock=clock)
    world, cache = _World(), ComparisonCache()
    for edit in [lambda: None, *_edits(world, clock)]:
        edit()
        _refresh(cache, world, registry)
    assert cache.misses == len(_edits(_World(), clock)) + 1
