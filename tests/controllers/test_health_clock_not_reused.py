"""A health verdict that can change with time alone is assessed again at every refresh.

A health script may read the clock (`os.time()`: a certificate, a lease or a job past its
deadline). The comparison cache and the per-resource reuse key on the live objects' uid and
resourceVersion, which time does not move; before, a script's Healthy stayed cached after its
deadline passed, and the app read Healthy while a fresh assessment said Degraded. Scripts
that cannot reach the clock are still cached (counted by the cache's hits).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from headway.clock import VirtualClock
from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState
from headway.health import HealthStatus
from headway.health.lua_script import LuaHealthScript
from headway.health.registry import HealthRegistry
from headway.model.obj import Obj
from headway.sync.comparison import Comparison, prepare_desired
from headway.sync.resources import ResourceKey, key_of

APP = "shop"
START = datetime(2026, 1, 1, tzinfo=UTC)
DEADLINE = int(START.timestamp()) + 60

BY_DEADLINE = """
local hs = {}
if os.time() > tonumber(obj.data.deadline) then
  hs.status = "Degraded"
  hs.message = "past its deadline"
else
  hs.status = "Healthy"
end
return hs
"""

TIMELESS = """
local hs = {}
hs.status = "Healthy"
return hs
"""


def _registry(clock: VirtualClock, source: str) -> HealthRegistry:
    script = LuaHealthScript(source, "test")
    return HealthRegistry(clock=clock).with_scripts({("", "ConfigMap"): script})


def _objects(image: str = "web:1") -> list[dict[str, Any]]:
    lease = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "lease"},
        "data": {"deadline": str(DEADLINE)},
    }
    web = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "web"},
        "data": {"deadline": "99999999999", "image": image},
    }
    return prepare_desired([lease, web], app=APP, namespace=APP)


def _live(prepared: list[dict[str, Any]]) -> dict[ResourceKey, Obj]:
    out: dict[ResourceKey, Obj] = {}
    for n, obj in enumerate(prepared):
        live = copy.deepcopy(obj)
        live["metadata"] = {**live["metadata"], "uid": f"uid-{n}", "resourceVersion": "1"}
        out[key_of(live)] = live
    return out


def _refresh(
    cache: ComparisonCache,
    registry: HealthRegistry,
    fingerprint: str,
    image: str = "web:1",
    objects: list[dict[str, Any]] | None = None,
) -> Comparison:
    desired = objects if objects is not None else _objects(image)
    live = _live(objects if objects is not None else _objects())
    state = DesiredState(tuple(desired), ("c0ffee",), fingerprint=fingerprint)
    return cache.refresh(
        app=APP, namespace=APP, desired_state=state, rules=(), rules_identity="",
        read_live=lambda _d: live, assess=registry.assess, clock_kinds=registry.reads_clock,
    ).comparison


def _lease_health(comparison: Comparison) -> HealthStatus:
    [lease] = [r for r in comparison.resources if r.key.name == "lease"]
    assert lease.health is not None
    return lease.health.status


def test_a_cached_comparison_is_not_reused_once_a_clock_reading_verdict_may_have_changed() -> None:
    clock = VirtualClock(START)
    cache, registry = ComparisonCache(), _registry(clock, BY_DEADLINE)
    assert _lease_health(_refresh(cache, registry, "f1")) is HealthStatus.HEALTHY
    clock.advance(120)  # nothing in Git or in the cluster changed; time did
    after = _refresh(cache, registry, "f1")
    assert _lease_health(after) is HealthStatus.DEGRADED
    assert after.health.status is HealthStatus.DEGRADED


def test_a_clock_reading_verdict_is_not_lent_to_the_next_comparison() -> None:
    clock = VirtualClock(START)
    cache, registry = ComparisonCache(), _registry(clock, BY_DEADLINE)
    first = _refresh(cache, registry, "f1")
    assert _lease_health(first) is HealthStatus.HEALTHY
    clock.advance(120)
    changed = _refresh(cache, registry, "f2", image="web:2")  # another resource changed
    assert _lease_health(changed) is HealthStatus.DEGRADED
    [web] = [r for r in changed.resources if r.key.name == "web"]
    assert web.status == "OutOfSync"  # the change itself was compared


DEGRADED_AFTER_DEADLINE = """
local hs = {}
if os.time() > tonumber(obj.spec.deadline) then
  hs.status = "Degraded"
  hs.message = "lease expired"
end
return hs
"""


def test_no_verdict_from_a_clock_reading_script_is_not_cached_either() -> None:
    """A script that gives no verdict ({}) until its deadline, for a kind with no built-in
    check: "no health" carries no mark, so the cache asks the registry which kinds' health
    may change with time."""
    clock = VirtualClock(START)
    script = LuaHealthScript(DEGRADED_AFTER_DEADLINE, "test")
    registry = HealthRegistry(clock=clock).with_scripts({("example.com", "Lease"): script})
    lease = {
        "apiVersion": "example.com/v1",
        "kind": "Lease",
        "metadata": {"name": "lease"},
        "spec": {"deadline": str(DEADLINE)},
    }
    objects = prepare_desired([lease], app=APP, namespace=APP)
    cache = ComparisonCache()
    before = _refresh(cache, registry, "f1", objects=objects)
    assert before.resources[0].health is None
    clock.advance(120)
    after = _refresh(cache, registry, "f1", objects=objects)
    assert after.resources[0].health is not None
    assert after.resources[0].health.status is HealthStatus.DEGRADED
    assert after.health.status is HealthStatus.DEGRADED


def test_scripts_that_cannot_read_the_clock_are_still_cached() -> None:
    clock = VirtualClock(START)
    cache, registry = ComparisonCache(), _registry(clock, TIMELESS)
    _refresh(cache, registry, "f1")
    clock.advance(120)
    _refresh(cache, registry, "f1")
    assert (cache.hits, cache.misses) == (1, 1)


def test_what_counts_as_reading_the_clock() -> None:
    assert LuaHealthScript(BY_DEADLINE, "t").reads_clock
    assert LuaHealthScript('local o = require("os") return {status = "Healthy"}', "t").reads_clock
    assert LuaHealthScript('local t = _G["o" .. "s"] return {}', "t").reads_clock
    assert not LuaHealthScript(TIMELESS, "t").reads_clock
    assert not LuaHealthScript('return {status = "Healthy", message = "osmosis"}', "t").reads_clock
