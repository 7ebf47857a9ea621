"""`parse_view` (validation and view in one walk) builds what `build_view` builds, and a
shape that changes how it checks or converts is honoured by the one walk too."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from headway.model import analysis, application, appproject, k8s, rollout
from headway.model import schema as s
from headway.model.yamlload import Document, load_documents

REPO = Path(__file__).resolve().parents[2]
SPECS = {
    "Application": application.APPLICATION_SPEC,
    "AppProject": appproject.APPPROJECT_SPEC,
    "Rollout": rollout.ROLLOUT_SPEC,
    "AnalysisTemplate": analysis.ANALYSIS_TEMPLATE_SPEC,
    "ClusterAnalysisTemplate": analysis.ANALYSIS_TEMPLATE_SPEC,
    "AnalysisRun": analysis.ANALYSIS_RUN_SPEC,
}


def _typed_documents() -> list[Document]:
    found: list[Document] = []
    for base in ("examples", "tests/examples", "tests/check/fixtures"):
        for path in sorted((REPO / base).rglob("*.y*ml")):
            loaded = load_documents(path.read_text(), str(path.relative_to(REPO)))
            found.extend(d for d in loaded.documents if d.kind in SPECS)
    return found


DOCUMENTS = _typed_documents()


def test_the_examples_hold_every_typed_kind() -> None:
    assert {d.kind for d in DOCUMENTS} >= set(SPECS) - {"AnalysisRun"}
    assert len(DOCUMENTS) > 200


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: f"{d.file}#{d.index}")
def test_the_one_walk_builds_the_views_the_builder_builds(doc: Document) -> None:
    spec = SPECS[doc.kind]
    status = doc.kind not in ("AnalysisTemplate", "ClusterAnalysisTemplate")
    parts, _ = k8s.parse_typed(doc, spec, status=status)
    if parts is None:
        pytest.skip("an example with an error builds no view")
    assert parts.spec == s.build_view(spec, doc.obj["spec"])
    assert parts.metadata == s.build_view(k8s.METADATA, doc.obj["metadata"])


def test_a_mutable_value_for_an_absent_field_is_each_views_own() -> None:
    report = s.Reporter(Document({}, "meta.yaml", 0, 1))
    first = s.parse_view(k8s.METADATA, {"name": "a"}, ("metadata",), report)
    second = s.parse_view(k8s.METADATA, {"name": "b"}, ("metadata",), report)
    assert first.labels == second.labels == {}
    assert first.labels is not second.labels
    assert first.finalizers is second.finalizers == ()  # a tuple cannot change: shared


class _Upper(s.ListOf):
    def convert(self, value: Any) -> Any:
        return tuple(item.upper() for item in value)


class _NoX(s.Scalar):
    def check(self, value: Any, path: s.Path, report: s.Reporter) -> None:
        super().check(value, path, report)
        if value == "x":
            report.error(path, "x is refused")


@dataclasses.dataclass(frozen=True)
class _Pair:
    names: tuple[str, ...]
    word: str | None


PAIR = s.Schema("Pair", (s.Field("names", _Upper(s.STR)), s.Field("word", _NoX("string"))), _Pair)


def test_a_shape_that_converts_its_own_way_is_converted_so() -> None:
    report = s.Reporter(Document({}, "pair.yaml", 0, 1))
    view = s.parse_view(PAIR, {"names": ["a", "b"], "word": "y"}, (), report)
    assert view == _Pair(names=("A", "B"), word="y")
    assert view == s.build_view(PAIR, {"names": ["a", "b"], "word": "y"})
    assert report.diagnostics == []


def test_a_shape_that_checks_its_own_way_is_checked_so() -> None:
    report = s.Reporter(Document({}, "pair.yaml", 0, 1))
    s.parse_view(PAIR, {"names": ["a", 3], "word": "x"}, (), report)
    assert [(d.field, d.message) for d in report.diagnostics] == [
        ("names[1]", "expected a string, got integer 3 (quote it)"),
        ("word", "x is refused"),
    ]
