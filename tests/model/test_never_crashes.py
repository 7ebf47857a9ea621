"""Bad input never raises: every field of every example replaced by every wrong shape."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.model.diagnostics import Severity
from headway.model.manifests import parse_manifest
from headway.model.yamlload import Document, load_documents
from headway.source.manifest_files import find_manifest_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gitops-repo"
WRONG: list[Any] = [None, 7, -1, 1.5, True, "x", "", [], {}, [None], [{}], {"k": [1]}, {3: 4}]


def _documents() -> list[Document]:
    found: list[Document] = []
    for path in find_manifest_files(EXAMPLES):
        found.extend(load_documents(path.read_text(), path.name).documents)
    return [d for d in found if str(d.obj.get("apiVersion", "")).startswith("argoproj.io")]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _paths(value, (*prefix, index))


def _replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    clone = copy.deepcopy(obj)
    parent = clone
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return clone


@pytest.mark.parametrize("doc", _documents(), ids=lambda d: f"{d.kind}/{d.name}")
def test_every_wrong_shape_everywhere_is_a_diagnostic_not_a_crash(doc: Document) -> None:
    cases = 0
    for path in _paths(doc.obj):
        for wrong in WRONG:
            obj = _replaced(doc.obj, path, wrong)
            mutated = dataclasses.replace(doc, obj=obj)
            view, diagnostics = parse_manifest(mutated)
            if view is None:
                assert any(d.severity is Severity.ERROR for d in diagnostics), (path, wrong)
            cases += 1
    assert cases > 100
