"""The comparison cache is keyed by the live objects' identities (key, uid,
resourceVersion) as a set: the order the store lists them in does not matter, a new
resourceVersion does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState
from headway.health import assess, default_registry
from headway.sync.resources import ResourceKey, key_of


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}}


DESIRED = DesiredState(
    objects=(_config_map("a"), _config_map("b"), _config_map("c")),
    revisions=("c0ffee",),
    fingerprint="tree-1",
)


def _live(names: Sequence[str], version: str = "1") -> dict[ResourceKey, dict[str, Any]]:
    out = {}
    for name in names:
        obj = _config_map(name)
        obj["metadata"].update(namespace="shop", uid=f"uid-{name}", resourceVersion=version)
        out[key_of(obj)] = obj
    return out


def _refresh(cache: ComparisonCache, live: Mapping[ResourceKey, Any]) -> None:
    cache.refresh(
        app="shop",
        namespace="shop",
        desired_state=DESIRED,
        rules=(),
        rules_identity="",
        read_live=lambda _desired: live,
        assess=assess,
        clock_kinds=default_registry().reads_clock,
    )


def test_the_same_live_objects_listed_in_another_order_reuse_the_comparison() -> None:
    cache = ComparisonCache()
    _refresh(cache, _live(["a", "b", "c"]))
    _refresh(cache, _live(["c", "a", "b"]))
    assert (cache.misses, cache.hits) == (1, 1)


def test_a_new_resource_version_compares_again() -> None:
    cache = ComparisonCache()
    _refresh(cache, _live(["a", "b", "c"]))
    _refresh(cache, _live(["a", "b", "c"], version="2"))
    assert (cache.misses, cache.hits) == (2, 0)
