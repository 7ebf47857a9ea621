"""After a render that keeps the documents of unchanged files (model/yamlreuse.py hands back
the very dicts it parsed last time), the comparison cache keeps what it prepared from each of
them too, and the result is what preparing and comparing from nothing gives.

Differential: at every step (one document changed, the same documents again at a new
fingerprint, another destination namespace, another cluster-scoped set, an object listed
twice, a hard refresh), the desired objects the cache hands out equal `prepare_desired` of the
rendered objects type for type, and the comparison equals `compare_app` of those without an
earlier comparison. Keeping is checked by identity, so a cache that kept nothing, or kept
across a namespace change, fails here.
"""

from __future__ import annotations

import copy
from typing import Any

from test_comparison_reuse import _assert_same, _config_map, _deployment, _live

from headway.controllers.app.refresh import ComparisonCache, Refresh
from headway.controllers.app.sources import DesiredState
from headway.health import assess, default_registry
from headway.model.obj import Obj
from headway.sync.comparison import compare_app, prepare_desired, same_value
from headway.sync.resources import ResourceKey

APP = "shop"


def _refresh(
    cache: ComparisonCache,
    objects: list[dict[str, Any]],
    fingerprint: str,
    live: dict[ResourceKey, Obj],
    *,
    namespace: str = APP,
    cluster_scoped: frozenset[tuple[str, str]] = frozenset(),
) -> Refresh:
    result = cache.refresh(
        app=APP, namespace=namespace, cluster_scoped=cluster_scoped,
        desired_state=DesiredState(tuple(objects), ("c0ffee",), fingerprint=fingerprint),
        rules=(), rules_identity="", read_live=lambda _d: live, assess=assess,
        clock_kinds=default_registry().reads_clock,
    )
    fresh = prepare_desired(
        copy.deepcopy(objects), app=APP, namespace=namespace, cluster_scoped=cluster_scoped
    )
    assert same_value(list(result.desired), fresh)
    from_nothing = compare_app(app=APP, desired=fresh, live=list(live.values()), assess=assess)
    _assert_same(result.comparison, from_nothing)
    return result


def _kept(before: Refresh, after: Refresh) -> int:
    return sum(any(a is b for b in before.desired) for a in after.desired)


def test_unchanged_documents_keep_their_prepared_objects_and_results_stay_fresh() -> None:
    rendered: list[dict[str, Any]] = [
        _deployment("web"), _deployment("api"), _config_map("a"), _config_map("b")
    ]
    live = _live(prepare_desired(copy.deepcopy(rendered), app=APP, namespace=APP))
    cache = ComparisonCache()
    first = _refresh(cache, rendered, "f1", live)

    changed = [_deployment("web", image="web:2"), *rendered[1:]]  # a new commit: one document
    second = _refresh(cache, changed, "f2", live)
    assert _kept(first, second) == 3
    assert second.comparison.diffs[second.comparison.resources[1].key] is (
        first.comparison.diffs[first.comparison.resources[1].key]
    )

    assert _kept(second, _refresh(cache, list(changed), "f3", live)) == 4

    elsewhere = _refresh(cache, changed, "f4", live, namespace="other")
    assert _kept(second, elsewhere) == 0
    scoped = _refresh(cache, changed, "f5", live, cluster_scoped=frozenset({("", "ConfigMap")}))
    assert _kept(elsewhere, scoped) == 0

    back = _refresh(cache, changed, "f6", live)
    twice = _refresh(cache, [*changed, changed[2]], "f7", live)
    assert _kept(back, twice) == 4
    assert twice.desired[2] is not twice.desired[4]  # an object listed twice: prepared again

    cache.forget(APP)
    assert _kept(twice, _refresh(cache, changed, "f8", live)) == 0
