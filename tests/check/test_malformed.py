"""Malformed manifests never crash a rule: every field of every fixture, replaced by a value
of the wrong type, still yields findings (or none), never an exception."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from check.conftest import FIXTURES
from headway.check.context import AppUnit, CheckContext
from headway.check.registry import run_checks
from headway.model.yamlload import Document, load_documents

WRONG_VALUES: list[Any] = [None, [], {}, "x", -7, [{"a": 1}]]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, child in enumerate(value[:2]):
            yield (*prefix, index)
            yield from _paths(child, (*prefix, index), depth + 1)


def _replaced(obj: Any, path: tuple[Any, ...], new: Any) -> Any:
    mutated = copy.deepcopy(obj)
    target = mutated
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return mutated


def _fixture_repositories() -> list[list[Document]]:
    """The documents of each `found` fixture, one list per fixture repository."""
    repositories = []
    for found in sorted(FIXTURES.glob("HW[123]*/found")):
        docs = []
        for file in sorted(found.glob("**/*.yaml")):
            docs.extend(load_documents(file.read_text(), file.name).documents)
        repositories.append(docs)
    return repositories


def _cases() -> Iterator[tuple[Document, list[Document]]]:
    seen: set[str] = set()
    for documents in _fixture_repositories():
        for position, doc in enumerate(documents):
            if repr(doc.obj) in seen:
                continue  # many fixtures share documents; mutate each one once
            seen.add(repr(doc.obj))
            yield doc, documents[:position] + documents[position + 1 :]


@pytest.mark.parametrize("wrong", WRONG_VALUES, ids=repr)
def test_rules_survive_wrong_types(wrong: Any) -> None:
    cases = list(_cases())
    assert cases
    for doc, others in cases:
        for path in _paths(doc.obj):
            broken = Document(_replaced(doc.obj, path, wrong), doc.file, doc.index, doc.line)
            apps = [broken] if broken.kind == "Application" else []
            unit = AppUnit(broken.name, apps[0] if apps else None, (broken, *others))
            run_checks(CheckContext(units=(unit,)))
