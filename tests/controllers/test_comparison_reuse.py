"""A comparison after a change takes each unchanged resource's diff and status from the app's
last comparison, and the result is the one a comparison from nothing gives.

Differential: after every step of a sequence of changes (one resource's content, a label, a
number written as a float, a boolean for a number, a live object's new resourceVersion and
status, a live object gone, a resource dropped from desired, an ignoreDifferences rule), the
comparison made with the earlier one equals the comparison made without it, field by field
and type for type. Reuse is counted by identity (the earlier comparison's diff objects), not
timed: bench/bench_refresh.py measures what it saves.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState
from headway.diff import compile_rules
from headway.health import HealthResult, HealthStatus, assess, default_registry
from headway.model.application import IgnoreDifferences
from headway.model.obj import Obj
from headway.sync.comparison import Comparison, compare_app, prepare_desired, same_value
from headway.sync.resources import ResourceKey, key_of

APP = "shop"


def _deployment(name: str, image: str = "web:1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


def _config_map(name: str, value: Any = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}
    }


def _rendered() -> list[dict[str, Any]]:
    return [_deployment("web"), _deployment("api"), _config_map("a"), _config_map("b")]


def _prepared(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return prepare_desired(copy.deepcopy(objects), app=APP, namespace=APP)


def _live(prepared: list[dict[str, Any]], version: int = 1) -> dict[ResourceKey, Obj]:
    out: dict[ResourceKey, Obj] = {}
    for n, obj in enumerate(prepared):
        meta = {**obj["metadata"], "uid": f"uid-{n}", "resourceVersion": str(version)}
        live: dict[str, Any] = {**copy.deepcopy(obj), "metadata": meta}
        if obj["kind"] == "Deployment":
            live["status"] = {"observedGeneration": 0, "replicas": 2, "updatedReplicas": 2,
                              "readyReplicas": 2, "availableReplicas": 2}
        out[key_of(live)] = live
    return out


def _assert_same(reused: Comparison, fresh: Comparison) -> None:
    """Equal in every field a caller reads, values compared type for type."""
    assert [r.to_status() for r in reused.resources] == [r.to_status() for r in fresh.resources]
    assert reused.resources == fresh.resources
    assert (reused.sync_status, reused.health) == (fresh.sync_status, fresh.health)
    assert (reused.shared, reused.ignore_warnings) == (fresh.shared, fresh.ignore_warnings)
    assert reused.diffs.keys() == fresh.diffs.keys()
    for key, diff in fresh.diffs.items():
        mine = reused.diffs[key]
        assert mine.modified == diff.modified, key
        assert same_value(mine.normalized_live, diff.normalized_live), key
        assert same_value(mine.normalized_desired, diff.normalized_desired), key
        assert mine.diff_lines == diff.diff_lines, key
    assert same_value(dict(reused.compared), dict(fresh.compared))


Step = Callable[[list[dict[str, Any]], dict[ResourceKey, Obj]], None]


def _web_image(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    desired[0]["spec"]["template"]["spec"]["containers"][0]["image"] = "web:2"


def _api_label(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    desired[1]["metadata"]["labels"]["tier"] = "back"


def _float_replicas(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    desired[0]["spec"]["replicas"] = 2.0  # == 2 in Python, not the same YAML


def _boolean_value(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    desired[2]["data"]["v"] = True  # and 1 == True
    desired[3]["data"]["v"] = 1


def _live_not_ready(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    key = next(k for k in live if k.name == "api")
    obj = copy.deepcopy(dict(live[key]))
    obj["metadata"]["resourceVersion"] = "7"
    obj["status"]["readyReplicas"] = obj["status"]["availableReplicas"] = 0
    live[key] = obj


def _live_gone(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    del live[next(k for k in live if k.name == "a")]


def _desired_dropped(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj]) -> None:
    del desired[3]  # ConfigMap b: live and tracked, so it is to be pruned


STEPS: dict[str, Step] = {
    "image": _web_image,
    "label": _api_label,
    "float": _float_replicas,
    "boolean": _boolean_value,
    "live-status": _live_not_ready,
    "live-gone": _live_gone,
    "dropped": _desired_dropped,
}


def _compare(desired: list[dict[str, Any]], live: dict[ResourceKey, Obj], **kw: Any) -> Comparison:
    return compare_app(app=APP, desired=desired, live=list(live.values()), assess=assess, **kw)


@pytest.mark.parametrize("name", list(STEPS))
def test_a_change_compares_only_what_it_changed_and_equals_a_fresh_comparison(name: str) -> None:
    rendered = _rendered()
    live = _live(_prepared(rendered))
    earlier = _compare(_prepared(rendered), live)
    STEPS[name](rendered, live)
    desired = _prepared(rendered)
    reused = _compare(desired, live, earlier=earlier)
    _assert_same(reused, _compare(desired, live))
    untouched = {"image": {"api", "a", "b"}, "label": {"web", "a", "b"},
                 "float": {"api", "a", "b"}, "boolean": {"web", "api"},
                 "live-status": {"web", "a", "b"}, "live-gone": {"web", "api", "b"},
                 "dropped": {"web", "api", "a"}}[name]
    kept = {k.name for k, d in reused.diffs.items() if earlier.diffs.get(k) is d}
    assert kept == untouched


def test_a_sequence_of_changes_stays_equal_to_fresh_comparisons() -> None:
    rendered = _rendered()
    live = _live(_prepared(rendered))
    earlier = _compare(_prepared(rendered), live)
    for step in STEPS.values():
        step(rendered, live)
        desired = _prepared(rendered)
        reused = _compare(desired, live, earlier=earlier)
        _assert_same(reused, _compare(desired, live))
        earlier = reused


def _refresh(
    cache: ComparisonCache, fingerprint: str, live: dict[ResourceKey, Obj], **kw: Any
) -> Comparison:
    state = DesiredState(tuple(copy.deepcopy(_rendered())), ("c0ffee",), fingerprint=fingerprint)
    arguments: dict[str, Any] = {
        "rules": (),
        "rules_identity": "",
        "assess": assess,
        "clock_kinds": default_registry().reads_clock,
        **kw,
    }
    return cache.refresh(
        app=APP, namespace=APP, desired_state=state, read_live=lambda _d: live, **arguments
    ).comparison


def test_the_cache_lends_the_last_comparison_only_under_the_same_rules_and_health() -> None:
    """A new rule set, another health assessment or a hard refresh (`forget`) compares
    every resource again; the same ones, after a render at a new fingerprint, reuse."""
    cache = ComparisonCache()
    live = _live(_prepared(_rendered()))
    first = _refresh(cache, "f1", live)
    again = _refresh(cache, "f2", live)
    assert all(again.diffs[k] is d for k, d in first.diffs.items())

    entry = IgnoreDifferences("apps", "Deployment", None, None, ("/spec/replicas",), (), ())
    ruled = _refresh(cache, "f3", live, rules=compile_rules([entry]), rules_identity="r1")
    assert not any(ruled.diffs[k] is d for k, d in again.diffs.items())

    def degraded(obj: Obj) -> HealthResult | None:
        return HealthResult(HealthStatus.DEGRADED, "always")

    judged = _refresh(cache, "f4", live, rules_identity="r1", assess=degraded)
    assert not any(judged.diffs[k] is d for k, d in ruled.diffs.items())
    assert judged.health.status is HealthStatus.DEGRADED

    cache.forget(APP)
    after = _refresh(cache, "f5", live, rules_identity="r1", assess=degraded)
    assert not any(after.diffs[k] is d for k, d in judged.diffs.items())


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.0, 1.5]),
    st.sampled_from(["", "1", "true", "a"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(["a", "b", "1"]), st.integers(0, 1)), inner,
                        max_size=3),
    ),
    max_leaves=8,
)


def _identical(a: Any, b: Any) -> bool:
    """The same value with the same type at every place, and maps in the same order."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return [(type(k), k) for k in a] == [(type(k), k) for k in b] and all(
            _identical(v, b[k]) for k, v in a.items()
        )
    if type(a) is list:
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(a=values, b=values)
def test_same_value_never_takes_a_value_for_another_type(a: Any, b: Any) -> None:
    if same_value(a, b):
        assert _identical(a, b)
    assert same_value(a, copy.deepcopy(a))  # what a new render of the same text gives


def test_a_comparison_the_cache_let_go_is_not_lent() -> None:
    """Lending keeps nothing alive: once the cache evicts an app's last comparison (here by
    another app's), the app compares every resource again."""
    cache = ComparisonCache(max_entries=1)
    live = _live(_prepared(_rendered()))
    first = _refresh(cache, "f1", live)
    cache.refresh(
        app="other", namespace=APP, desired_state=DesiredState((), ("c0ffee",), fingerprint="o"),
        rules=(), rules_identity="", read_live=lambda _d: {}, assess=assess,
        clock_kinds=default_registry().reads_clock,
    )
    again = _refresh(cache, "f2", live)
    assert not any(again.diffs[k] is d for k, d in first.diffs.items())
    assert all(_refresh(cache, "f3", live).diffs[k] is d for k, d in again.diffs.items())


def test_a_changed_desired_object_skips_the_in_sync_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resource whose desired object changed while its live object stayed the same (a
    commit the cluster has not seen yet) goes straight to the projection: the quick walk
    that answers "in sync" would go most of the way to the changed field for nothing. A
    resource compared for the first time still takes the walk (most are in sync)."""
    from headway.diff import compare

    walked: list[str] = []
    real = compare.projects_unchanged

    def counted(desired: Any, live: Any, field: str, *args: Any, **kw: Any) -> bool:
        if field == "" and isinstance(desired, dict) and "kind" in desired:  # a whole object
            walked.append(str(desired.get("metadata", {}).get("name")))
        return real(desired, live, field, *args, **kw)

    monkeypatch.setattr(compare, "projects_unchanged", counted)
    rendered = _rendered()
    live = _live(_prepared(rendered))
    earlier = _compare(_prepared(rendered), live)
    assert sorted(walked) == ["a", "api", "b", "web"]
    walked.clear()
    _web_image(rendered, live)
    desired = _prepared(rendered)
    reused = _compare(desired, live, earlier=earlier)
    assert walked == []  # web changed: projected at once; the others were lent
    _assert_same(reused, _compare(desired, live))
