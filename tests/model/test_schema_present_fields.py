"""`parse_view` reads only the fields a mapping holds, and falls back to the walk over the whole
table (in table order) when a required field is missing or anything is reported. Differential:
every typed example, and the same examples broken at random (a value of the wrong type, a
null, a key removed or added, a mapping's keys in reverse order), read with the shortcut and
with the table walk alone give equal views and the very same diagnostics in the same order."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headway.model import manifests
from headway.model import schema as s
from headway.model.yamlload import Document, load_documents

REPO = Path(__file__).resolve().parents[2]
TYPED_KINDS = {
    "Application",
    "AppProject",
    "ApplicationSet",
    "Rollout",
    "AnalysisTemplate",
    "ClusterAnalysisTemplate",
    "AnalysisRun",
    "PromotionPipeline",
}
# What a broken manifest holds where a field belongs.
WRONG_VALUES: list[Any] = [
    None, 0, -3, 2.5, True, "", "x", "25%", "1m", [], [1, None], {}, {"a": 1},
]  # fmt: skip


def _typed_documents() -> list[Document]:
    found: list[Document] = []
    for base in ("examples", "tests/examples", "tests/check/fixtures"):
        for path in sorted((REPO / base).rglob("*.y*ml")):
            loaded = load_documents(path.read_text(), str(path.relative_to(REPO)))
            found.extend(d for d in loaded.documents if d.kind in TYPED_KINDS)
    return found


DOCUMENTS = _typed_documents()


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into `value` (mappings and lists), `value` itself first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*path, index)))
    return found


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _broken(obj: Any, edits: list[tuple[int, str, int]]) -> Any:
    """`obj` with each edit applied: (which path, what to do, which wrong value)."""
    obj = _copy(obj)
    for where, action, which in edits:
        paths = _paths(obj)[1:]
        if not paths:
            break
        *parents, last = paths[where % len(paths)]
        holder = obj
        wrong = _copy(WRONG_VALUES[which % len(WRONG_VALUES)])  # never a shared list or map
        for part in parents:
            holder = holder[part]
        if action == "replace":
            holder[last] = wrong
        elif action == "remove" and isinstance(holder, dict):
            del holder[last]
        elif action == "add" and isinstance(holder, dict):
            holder["unknownField" if which % 2 else "nme"] = wrong
        elif action == "reverse" and isinstance(holder[last], dict):
            holder[last] = dict(reversed(list(holder[last].items())))
    return obj


def _table_walk_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s, "_present_fields", lambda *_args: None)


def _read(document: Document) -> tuple[Any, list[Any]]:
    return manifests.parse_manifest(document)


def _both_ways(document: Document) -> tuple[tuple[Any, list[Any]], tuple[Any, list[Any]]]:
    shortcut = _read(document)
    with pytest.MonkeyPatch.context() as patch:
        _table_walk_only(patch)
        table = _read(document)
    return shortcut, table


def test_the_examples_hold_the_typed_kinds_and_reach_both_walks() -> None:
    assert {d.kind for d in DOCUMENTS} >= TYPED_KINDS - {"AnalysisRun"}
    assert len(DOCUMENTS) > 200


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: f"{d.file}#{d.index}")
def test_an_example_reads_the_same_with_the_shortcut(doc: Document) -> None:
    shortcut, table = _both_ways(doc)
    assert shortcut[1] == table[1]
    assert shortcut[0] == table[0]


edits = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=10_000),
        st.sampled_from(["replace", "remove", "add", "reverse"]),
        st.integers(min_value=0, max_value=100),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(index=st.integers(min_value=0, max_value=len(DOCUMENTS) - 1), changes=edits)
def test_a_broken_example_reports_the_same_in_the_same_order(
    index: int, changes: list[tuple[int, str, int]]
) -> None:
    document = DOCUMENTS[index]
    broken = dataclasses.replace(document, obj=_broken(document.obj, changes))
    shortcut, table = _both_ways(broken)
    assert shortcut[1] == table[1]
    assert shortcut[0] == table[0]


def test_reports_from_several_fields_come_in_table_order_whatever_the_key_order() -> None:
    """The case the fallback exists for: two problems in one mapping written in the reverse
    of the table's order are still reported in table order."""
    table = s.Schema("Pair", (s.Field("first", s.INT), s.Field("second", s.INT)))
    report = s.Reporter(Document({}, "pair.yaml", 0, 1))
    s.parse_view(table, {"second": "b", "first": "a"}, (), report)
    assert [d.field for d in report.diagnostics] == ["first", "second"]


def test_a_missing_required_field_is_reported_among_the_others_in_table_order() -> None:
    table = s.Schema(
        "Three",
        (
            s.Field("a", s.INT),
            s.Field("b", s.STR, required=True),
            s.Field("c", s.INT),
        ),
    )
    report = s.Reporter(Document({}, "three.yaml", 0, 1))
    s.parse_view(table, {"c": "x", "a": "y"}, (), report)
    assert [(d.field, d.message) for d in report.diagnostics] == [
        ("a", 'expected an integer, got string "y"'),
        ("b", "missing required field"),
        ("c", 'expected an integer, got string "x"'),
    ]
