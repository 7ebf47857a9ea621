"""The field tables and the dataclasses they build agree, for every table reachable."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from headway.model import analysis, application, appproject, k8s, rollout
from headway.model import schema as s

ROOTS = {
    "Application": application.APPLICATION_SPEC,
    "AppProject": appproject.APPPROJECT_SPEC,
    "Rollout": rollout.ROLLOUT_SPEC,
    "AnalysisTemplate": analysis.ANALYSIS_TEMPLATE_SPEC,
    "AnalysisRun": analysis.ANALYSIS_RUN_SPEC,
    "ObjectMeta": k8s.METADATA,
}


def _tables(table: s.Schema, seen: set[int]) -> Iterator[s.Schema]:
    if id(table) in seen:
        return
    seen.add(id(table))
    yield table
    for spec in table.fields:
        shape = spec.shape
        while isinstance(shape, s.ListOf):
            shape = shape.item
        if isinstance(shape, s.Obj):
            yield from _tables(shape.schema, seen)


ALL = [t for root in ROOTS.values() for t in _tables(root, set())]


@pytest.mark.parametrize("table", [t for t in ALL if t.view is not None], ids=lambda t: t.name)
def test_view_fields_match_table(table: s.Schema) -> None:
    assert table.view is not None
    fields = dataclasses.fields(table.view)
    required = {f.name for f in fields if f.default is dataclasses.MISSING}
    attributes = {spec.attribute for spec in table.fields}
    assert required <= attributes <= {f.name for f in fields}
    assert dataclasses.is_dataclass(table.view)
    assert table.view.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_many_tables_are_covered() -> None:
    assert len(ALL) > 60


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("repoURL", "repo_url"),
        ("jqPathExpressions", "jq_path_expressions"),
        ("HPAReplicas", "hpa_replicas"),
        ("keyID", "key_id"),
        ("iat", "iat"),
    ],
)
def test_snake_case(name: str, snake: str) -> None:
    assert s.snake_case(name) == snake


def test_set_fields_names_the_set_members_in_the_order_asked() -> None:
    @dataclasses.dataclass(frozen=True)
    class Union:
        set_weight: int | None
        pause: dict[str, str] | None
        analysis: dict[str, str] | None

    view = Union(set_weight=None, pause={}, analysis={"templates": "x"})
    assert s.set_fields(view, ("setWeight", "pause", "analysis")) == ("pause", "analysis")
    assert s.set_fields(view, ("analysis", "pause")) == ("analysis", "pause")
    assert s.set_fields(Union(None, None, None), ("setWeight", "pause")) == ()
