"""`Document.line_of` finds the line of every field path the way the reader that kept every
document's node tree found it, though `load_documents` now composes a file's node trees only
when one of its documents is first asked for a field's line.

The reference below composes each document with marks and builds it with PyYAML's own
constructor (which moves merged fields into the merging mapping's node), as the eager reader
did, then records the line of every path in the node tree. Each case is compared on every
path of every document, on paths that do not exist (the nearest ancestor's line), and
through `Document.derived`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from headway.model import yamlload
from headway.model.yamlload import PathPart, load_documents, load_documents_fast

FIELD_LINES = Path(__file__).parent / "fixtures" / "field-lines"

CASES = {
    **{str(p.relative_to(FIELD_LINES)): p.read_text() for p in FIELD_LINES.rglob("*.yaml")},
    "flow": "{kind: A, spec: {a: [1, {b: 2}], c: 'x'}}\n",
    "block scalars": "a: |\n  one\n  two\nb: >-\n  three\nc: {d: 1}\n",
    "duplicate keys": "a: 1\nb: {x: 1}\na: 2\nb: {y: 2}\n",
    "explicit tags": "a: !!int ''\nb: !!str 5\nc: !!bool maybe\nd:\n  e: 1\n",
    "merge keys": "base: &b {a: 1, b: 2}\nm:\n  <<: *b\n  b: 3\n  c: 4\n",
    "documents": "# c\n---\n---\na: 1\n...\n---\nb:\n  - x\n  - y: 2\n---\n",
    "error after documents": "a: {b: 1}\n---\nc:\n  d: [\n---\ne: 1\n",
    "alias bomb beside a document": "a: 1\n---\nx: &x [y, y]\nz: [*x, *x]\n",
    "aliased document": "a: &x {b: [1, 2]}\nc: *x\n",
}


def _reference_nodes(text: str) -> list[yaml.Node]:
    roots: list[yaml.Node] = []
    loader = yamlload._Loader(text)  # PyYAML's safe loader, reading `!!int ''` as a string
    try:
        while loader.check_node():
            root = loader.get_node()
            roots.append(root)
            if not yamlload._alias_problem(root):
                loader.construct_document(root)
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return roots


FieldPath = tuple[PathPart, ...]


def _lines(node: yaml.Node, path: FieldPath) -> Iterator[tuple[FieldPath, int]]:
    """(path, line) for every field under `node`; the first of duplicate keys wins."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value not in seen:
                seen.add(key.value)
                yield (*path, key.value), key.start_mark.line + 1
                yield from _lines(value, (*path, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*path, index), item.start_mark.line + 1
            yield from _lines(item, (*path, index))


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_field_line_is_the_one_the_node_tree_gives(name: str) -> None:
    text = CASES[name]
    roots = _reference_nodes(text)
    for document in load_documents(text, name).documents:
        root = roots[document.index]
        assert document.line == root.start_mark.line + 1
        expected = dict(_lines(root, ()))
        for path, line in expected.items():
            assert document.line_of(path) == line, (name, path)
            assert document.line_of((*path, "absent", 0)) == line, (name, path)
            derived = document.derived({}, path[:-1])
            assert derived.line_of(path[-1:]) == line, (name, path)
        assert document.line_of(("absent",)) == document.line


def test_a_clean_file_composes_no_node_tree_until_a_line_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    composed: list[str] = []
    compose_all = yamlload._compose_all

    def counted(text: str) -> list[yaml.Node]:
        composed.append(text)
        return compose_all(text)

    monkeypatch.setattr(yamlload, "_compose_all", counted)
    text = CASES["documents"] + "---\nkind: Service\nmetadata: {name: web}\n"
    documents = load_documents(text, "f.yaml").documents
    assert [(d.kind, d.name, d.line) for d in documents] == [
        ("", "", 4),
        ("", "", 7),
        ("Service", "web", 12),
    ]
    assert [d.line_of(()) for d in documents] == [4, 7, 12]
    assert composed == []
    assert documents[1].line_of(("b", 1, "y")) == 9
    assert documents[2].line_of(("metadata", "name")) == 13
    assert composed == [text]  # once for the file, whichever document asked


def test_the_fast_reader_answers_the_document_line_without_composing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(_text: str) -> Any:
        raise AssertionError("composed a node tree")

    monkeypatch.setattr(yamlload, "_compose_all", refuse)
    (document,) = load_documents_fast("a:\n  b: 1\n", "f.yaml").documents
    assert document.line_of(("a", "b")) == 1
    assert document.derived({}, ("a",)).line_of(("b",)) == 1


def test_letting_go_of_field_lines_leaves_the_document_line() -> None:
    (document,) = load_documents("a:\n  b: 1\n", "f.yaml").documents
    assert document.has_field_lines and document.line_of(("a", "b")) == 2
    bare = document.without_field_lines()
    assert not bare.has_field_lines and bare == document
    assert bare.line_of(("a", "b")) == 1
