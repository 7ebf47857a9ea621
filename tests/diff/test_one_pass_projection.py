"""A changed resource is projected and compared in one walk (`project_and_match`); before,
`diff_resource` built the projection and then walked it again with `same_values`. The
one-walk answer must be the two-walk answer: the same projection, value for value and type
for type, and the same verdict - over random sides, and over random edits of the
Deployments a warm refresh meets (the diff text included)."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from headway.diff import compare
from headway.diff.compare import ResourceDiff, diff_resource, project, project_and_match
from headway.diff.paths import ABSENT

FIELDS = ("", "containers", "ports", "env", "requests", "a")
# A small alphabet, so that independently drawn sides often agree in part: merge-keyed lists,
# a quantity map, and scalars that compare canonically (NaN the same value as NaN alone).
KEYS = ["name", "port", "containerPort", "containers", "env", "ports", "requests", "a", "b"]
SCALARS = [1, "1", 2, "x", "1000m", True, False, 0, None, 1.0, float("nan"), "80", 80]
values = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=10,
)
objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)


@st.composite
def sides(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    """desired, live (drawn alone, a copy of desired, or desired with one key changed) and
    the last applied configuration."""
    desired = draw(objects)
    changed = st.tuples(st.sampled_from(KEYS), values).map(lambda kv: {**desired, kv[0]: kv[1]})
    live = draw(st.one_of(objects, st.just(copy.deepcopy(desired)), changed))
    applied = draw(st.one_of(st.just(ABSENT), objects, st.just(copy.deepcopy(desired))))
    return desired, live, applied


def _same(left: Any, right: Any) -> bool:
    """Equal value for value and type for type, key order included (NaN equals NaN here)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


def _two_walks(desired: Any, live: Any, field: str, parent: str, applied: Any) -> Any:
    projected = project(desired, live, field, parent, applied)
    return projected, compare.same_values(projected, desired)


@settings(max_examples=2000)
@given(case=sides(), field=st.sampled_from(FIELDS), parent=st.sampled_from(FIELDS))
@example(case=({"a": float("nan")}, {"a": float("nan")}, ABSENT), field="", parent="")
@example(  # a lost item and an item apply would remove, paired by position
    case=(
        {"ports": [{"port": 1}, {"port": 2}]},
        {"ports": [{"port": 1}, {"port": 3}]},
        {"ports": [{"port": 3}]},
    ),
    field="",
    parent="",
)
@example(case=({"a": [1, True]}, {"a": [1.0, 1]}, {"b": 1}), field="", parent="")
def test_one_walk_gives_what_two_walks_gave(
    case: tuple[Any, Any, Any], field: str, parent: str
) -> None:
    desired, live, applied = case
    mine, verdict = project_and_match(desired, live, field, parent, applied)
    theirs, reference = _two_walks(desired, live, field, parent, applied)
    assert _same(mine, theirs)
    assert verdict is reference


def _two_walk_diff(desired: dict[str, Any], live: dict[str, Any]) -> ResourceDiff:
    """`diff_resource` as it read before the one walk."""
    norm_desired, norm_live = compare.normalize_pair(desired, live)
    assert norm_desired is not None and norm_live is not None
    applied = compare.last_applied(live)
    if compare.projects_unchanged(norm_desired, norm_live, "", applied=applied):
        return ResourceDiff(False, norm_desired, norm_desired)
    projected = project(norm_desired, norm_live, "", applied=applied)
    return ResourceDiff(not compare.same_values(projected, norm_desired), projected, norm_desired)


DEPLOYMENT: dict[str, Any] = {
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
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    }
                ]
            }
        },
    },
}
PATHS = [
    ("spec", "replicas"),
    ("spec", "template", "spec", "containers", 0, "image"),
    ("spec", "template", "spec", "containers", 0, "ports", 0, "containerPort"),
    ("spec", "template", "spec", "containers", 0, "resources", "requests", "cpu"),
    ("spec", "template", "spec", "containers", 0, "env"),
    ("spec", "template", "spec", "containers"),
    ("metadata", "labels", "app"),
    ("metadata", "labels"),
]


@st.composite
def edited(draw: st.DrawFn) -> dict[str, Any]:
    """DEPLOYMENT with a few values replaced, dropped or added at paths a refresh meets."""
    obj = copy.deepcopy(DEPLOYMENT)
    for _ in range(draw(st.integers(0, 3))):
        *head, last = draw(st.sampled_from(PATHS))
        parent: Any = obj
        for step in head:  # an earlier edit may have dropped or replaced a step
            found = isinstance(parent, dict) and step in parent
            found = found or (
                isinstance(parent, list) and isinstance(step, int) and step < len(parent)
            )
            parent = parent[step] if found else None
        if isinstance(parent, dict):
            choice = draw(st.sampled_from(["set", "drop", "add"]))
            if choice == "drop":
                parent.pop(last, None)
            elif choice == "add":
                parent[draw(st.sampled_from(KEYS))] = draw(values)
            else:
                parent[last] = draw(values)
    return obj


@settings(max_examples=1000)
@given(desired=edited(), live=edited(), applied=st.one_of(st.none(), edited()))
def test_a_deployment_diff_is_what_it_was(
    desired: dict[str, Any], live: dict[str, Any], applied: dict[str, Any] | None
) -> None:
    live = {**live, "metadata": {**live["metadata"], "uid": "u1", "resourceVersion": "9"}}
    if applied is not None:
        notes = {compare._LAST_APPLIED: json.dumps(applied)}
        live["metadata"] = {**live["metadata"], "annotations": notes}
    mine = diff_resource(desired, live)
    theirs = _two_walk_diff(desired, live)
    assert mine.modified is theirs.modified
    assert _same(mine.normalized_live, theirs.normalized_live)
    assert _same(mine.normalized_desired, theirs.normalized_desired)
    assert mine.diff_lines == theirs.diff_lines
