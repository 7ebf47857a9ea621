"""`projects_unchanged` answers "is the projection of live onto desired desired itself?"
without building the projection; `diff_resource` then skips building it. A yes must mean the
projection really is desired, value for value and type for type, or an out-of-sync resource
would read Synced; and an in-sync resource must take the shortcut."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from headway.diff import compare
from headway.diff.compare import diff_resource, project, projects_unchanged
from headway.diff.paths import ABSENT

# A small alphabet, so that independently drawn sides often agree in part: merge-keyed lists
# (containers, env, ports), quantity maps (requests), and scalars that compare canonically.
KEYS = ["name", "port", "containerPort", "containers", "env", "ports", "requests", "a", "b"]
SCALARS = [1, "1", 2, "x", "y", "1000m", True, False, 0, None, 1.0, float("nan"), "80", 80]

scalars = st.sampled_from(SCALARS)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=10,
)
objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)


@st.composite
def sides(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    desired = draw(objects)
    live = draw(st.one_of(objects, st.just(copy.deepcopy(desired)), _tweaked(desired)))
    applied = draw(st.one_of(st.just(ABSENT), objects, st.just(copy.deepcopy(desired))))
    return desired, live, applied


def _tweaked(desired: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A copy of desired with one more key, one key fewer, or one value replaced."""
    keys = sorted(desired)
    add = st.tuples(st.sampled_from(KEYS), values).map(lambda kv: {**desired, kv[0]: kv[1]})
    if not keys:
        return add
    drop = st.sampled_from(keys).map(lambda k: {x: v for x, v in desired.items() if x != k})
    change = st.tuples(st.sampled_from(keys), values).map(lambda kv: {**desired, kv[0]: kv[1]})
    return add | drop | change


def _same(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


@settings(max_examples=1500)
@given(case=sides())
def test_a_yes_means_the_projection_is_desired_itself(case: tuple[Any, Any, Any]) -> None:
    desired, live, applied = case
    if projects_unchanged(desired, live, "", applied=applied):
        assert _same(project(desired, live, "", applied=applied), desired)


@settings(max_examples=300)
@given(desired=objects)
def test_a_live_copy_of_desired_always_takes_the_shortcut(desired: dict[str, Any]) -> None:
    assert projects_unchanged(desired, copy.deepcopy(desired), "")


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "web:1",
                        "ports": [{"containerPort": 8080}],
                        "resources": {"requests": {"cpu": "1000m"}},
                    }
                ]
            }
        },
    },
}


def _live(**container: Any) -> dict[str, Any]:
    live = copy.deepcopy(DEPLOYMENT)
    live["metadata"].update(uid="u1", resourceVersion="7")
    live["status"] = {"readyReplicas": 2}
    (first,) = live["spec"]["template"]["spec"]["containers"]
    first.update(container, terminationMessagePath="/dev/termination-log")
    return live


def test_an_in_sync_resource_is_compared_without_a_projection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("projected")

    monkeypatch.setattr(compare, "project", refuse)
    live = _live(resources={"requests": {"cpu": "1"}})  # the same quantity, spelled otherwise
    result = diff_resource(DEPLOYMENT, live)
    assert not result.modified
    assert result.normalized_live == result.normalized_desired


def test_an_out_of_sync_resource_is_still_projected_and_shown() -> None:
    result = diff_resource(DEPLOYMENT, _live(image="web:2"))
    assert result.modified
    assert result.normalized_live is not None
    (first,) = result.normalized_live["spec"]["template"]["spec"]["containers"]
    assert first["image"] == "web:2"
    assert "terminationMessagePath" not in first  # projected onto desired's fields


def test_a_diff_is_written_only_when_someone_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh compares every resource; dumping both sides' YAML for the diff text made a
    changed app cost about three unchanged ones, though only `headway app diff` and the
    dashboard read it."""
    written: list[Any] = []
    real = compare.yaml_diff_lines
    monkeypatch.setattr(compare, "yaml_diff_lines", lambda *a: written.append(a) or real(*a))
    result = diff_resource(DEPLOYMENT, _live(image="web:2"))
    assert result.modified and written == []
    assert "-      - image: web:2" in result.diff_lines
    assert len(written) == 1
    assert result.diff_lines is result.diff_lines and len(written) == 1  # written once


def _reference_project(desired: Any, live: Any, field: str, parent: str = "",
                       applied: Any = ABSENT) -> Any:
    """`project` as it read before it told types apart by `type()` first: ABC checks only."""
    if isinstance(desired, Mapping) and isinstance(live, Mapping):
        before = applied if isinstance(applied, Mapping) else {}
        out = {
            k: _reference_project(v, live[k], k, field, before.get(k, ABSENT))
            for k, v in desired.items()
            if k in live
        }
        out.update({k: live[k] for k in before if k not in desired and k in live})
        return out
    if isinstance(desired, list) and isinstance(live, list):
        keys = compare._merge_key(field, desired, live)
        if keys is not None:
            earlier = applied if isinstance(applied, list) else []
            by_key = {str(item[keys]): item for item in live}
            prior = {str(i[keys]): i for i in earlier if isinstance(i, Mapping) and keys in i}
            out_list = [
                _reference_project(item, by_key[str(item[keys])], "",
                                   applied=prior.get(str(item[keys]), ABSENT))
                for item in desired if str(item[keys]) in by_key
            ]
            wanted = {str(item[keys]) for item in desired}
            out_list.extend(by_key[k] for k in prior if k not in wanted and k in by_key)
            return out_list
        if len(desired) == len(live):
            return [_reference_project(d, lv, field) for d, lv in zip(desired, live, strict=True)]
        return live
    quantity = parent in compare._QUANTITY_MAPS
    return desired if compare.scalars_equal(desired, live, quantity=quantity) else live


@settings(max_examples=1500)
@given(case=sides())
@example(case=({"requests": {"a": "1000m"}}, {"requests": {"a": 1}}, ABSENT))  # a quantity
@example(case=({"a": [1, True]}, {"a": [1.0, 1]}, {"b": 1}))
def test_the_projection_is_the_reference_projection(case: tuple[Any, Any, Any]) -> None:
    """Differential: the projection every changed resource builds, against the reading it
    replaced, value for value and type for type."""
    desired, live, applied = case
    for field in ("", "containers", "ports", "requests"):
        mine = project(desired, live, field, applied=applied)
        assert _same(mine, _reference_project(desired, live, field, applied=applied))
        for key, value in desired.items():
            if key in live:  # a nested call, with a parent map's key
                theirs = _reference_project(value, live[key], key, field)
                assert _same(project(value, live[key], key, field), theirs)


@settings(max_examples=800)
@given(case=sides())
@example(case=({"name": float("nan")}, {"name": float("nan")}, ABSENT))  # in sync either way
def test_expecting_a_change_gives_the_same_diff(case: tuple[Any, Any, Any]) -> None:
    """`diff_resource(expect_change=True)` skips the quick walk only: the same answer, the
    same shown sides, for any pair (in sync or not)."""
    desired, live, _ = case
    plain = diff_resource(desired, live)
    expecting = diff_resource(desired, live, expect_change=True)
    assert expecting.modified == plain.modified
    assert _same(expecting.normalized_live, plain.normalized_live)
    assert _same(expecting.normalized_desired, plain.normalized_desired)
