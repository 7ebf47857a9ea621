"""`load_documents_fast` and `load_documents` read what PyYAML's own constructor reads (behind
Headway's alias check): the same objects (types included), the same documents with the same
lines and indexes, the same diagnostics; the fast path only lacks the node trees (field
lines). Differential tests on generated YAML, with the scalars whose meaning differs between
YAML readers (`yes`, `0o17`, `1:20`, `.nan`, dates, ...)."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headway.model import yamlfast, yamlload, yamlrust
from headway.model.yamlload import LoadResult, load_documents, load_documents_fast

# Plain scalars the safe resolver reads as something other than a string, or nearly does.
EDGE_SCALARS = [
    "yes", "No", "ON", "off", "y", "n", "true", "False", "~", "null", "Null", "",
    "0", "-0", "+12", "017", "0o17", "0x1F", "0b101", "1_000", "1:20", "-1:20:30", "0b_", "0x_",
    "1.5", "1e3", "1.0e+3", "6.8523015e+5", "685_230.15", "190:20:30.15", ".inf", "-.Inf",
    ".NaN", ".5", "1.", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
    "2002-12-14T01:02:03Z", "2001-13-45", "2001-02-30", "2001-1-1 25:00:00", "=", "<<",
    "web", "a b", "8080", "100m", "128Mi", "v1", "apps/v1",
]  # fmt: skip
# Tokens for free-form text: mostly broken YAML, sometimes anchors, tags and merge keys.
TOKENS = [
    "a", "b", ": ", ":", "\n", "- ", "  ", "{", "}", "[", "]", ", ", "&x ", "*x", "&y ", "*y",
    "<<: ", "!!str ", "!!int ", "!!binary ", "!!set ", "!!map ", "!custom ", "? ", "'q'",
    '"d"', "---\n", "...\n", "#c", "|\n  ", ">\n  ", "\t", "%YAML 1.1\n", "\x14", "\ufeff",
    *EDGE_SCALARS,
]  # fmt: skip


def _same(left: Any, right: Any) -> bool:
    """Equal and of the same types all the way down (`1 == True == 1.0` is not enough)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(
            _same(k1, k2) and _same(left[k1], right[k2]) for k1, k2 in zip(left, right, strict=True)
        )
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, datetime.datetime):
        return left == right and left.tzinfo == right.tzinfo
    return bool(left == right)


def _with_pyyaml_constructor(text: str) -> LoadResult:
    """`load_documents` with every document composed and built by PyYAML's
    `construct_document` (neither read by yaml_rs, nor from events, nor built by `yamlfast`)."""

    def leave_to_pyyaml(*_args: Any) -> Any:
        raise yamlfast.NotPlain("reference")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlfast, "read_plain_documents", leave_to_pyyaml)
        patch.setattr(yamlfast, "build_object", leave_to_pyyaml)
        patch.setattr(yamlrust._READER, "disabled", True)  # no yaml_rs either
        return load_documents(text, "f.yaml")


def _assert_same_reading(text: str) -> None:
    reference = _with_pyyaml_constructor(text)
    for loaded in (load_documents_fast(text, "f.yaml"), load_documents(text, "f.yaml")):
        assert loaded.diagnostics == reference.diagnostics
        assert [(d.index, d.line, d.file) for d in loaded.documents] == [
            (d.index, d.line, d.file) for d in reference.documents
        ]
        for got, expected in zip(loaded.documents, reference.documents, strict=True):
            assert _same(got.obj, expected.obj), (text, got.obj, expected.obj)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


scalars = st.sampled_from(EDGE_SCALARS).flatmap(
    lambda s: st.sampled_from([s, _quoted(s), f"!!str {s}" if s else "''"])
)


def _block(value: Any, indent: str) -> str:
    """`value` (nested lists and dicts of YAML scalar texts) as block YAML."""
    if isinstance(value, dict):
        if not value:
            return " {}\n"
        return "\n" + "".join(
            f"{indent}{key}:{_block(item, indent + '  ')}" for key, item in value.items()
        )
    if isinstance(value, list):
        if not value:
            return " []\n"
        return "\n" + "".join(f"{indent}-{_block(item, indent + '  ')}" for item in value)
    return f" {value}\n"


trees = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["name", "spec", "a b", "8080", "yes", "~"]), inner)
    ),
    max_leaves=12,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents=st.lists(st.dictionaries(scalars, trees, min_size=1, max_size=4), max_size=3))
def test_generated_manifests_read_the_same(documents: list[dict[str, Any]]) -> None:
    text = "---\n".join(_block(doc, "").lstrip("\n") for doc in documents)
    _assert_same_reading(text)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_free_form_text_reads_the_same_broken_or_not(text: str) -> None:
    _assert_same_reading(text)


def _outcome(read: Any, text: str | bytes) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except yaml.YAMLError as err:
        return "error", (type(err), str(err))


def _assert_load_one_as_pyyaml(text: str | bytes) -> None:
    def leave_to_pyyaml(*_args: Any) -> Any:
        raise yamlfast.NotPlain("reference")

    got = _outcome(yamlload.load_one, text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlfast, "read_plain_documents", leave_to_pyyaml)
        patch.setattr(yamlrust._READER, "disabled", True)
        expected = _outcome(yamlload.load_one, text)
    assert got[0] == expected[0], (text, got, expected)
    assert _same(got[1], expected[1]) if got[0] == "value" else got == expected


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_load_one_reads_what_pyyaml_reads_or_raises_its_error(text: str) -> None:
    _assert_load_one_as_pyyaml(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n---\nb: 2\n",  # two documents: PyYAML's error
        "a: 1\n---\n",  # a second, empty document: the same error
        "---\n",  # one empty document
        "",  # none
        "# a comment\n",  # none either
        "a: [1, {b: yes}]\nc: 2001-12-14\n",
        "a: !!int ''\n",
        "x: &a 1\ny: *a\n",
        "a: [\n",
        "\ufeffname: café\n".encode(),  # bytes, as a tree reads them
        b"a: 1\n---\nb: 2\n",
    ],
)
def test_load_one_reads_single_and_multiple_documents_as_pyyaml(text: str | bytes) -> None:
    _assert_load_one_as_pyyaml(text)


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {a: 1}\nfirst: *b\nsecond: {<<: *b, c: 2}\n",  # an alias and a merge key
        "a: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !!omap [{k: v}]\n",  # tags left to PyYAML
        "? [a, b]\n: c\n",  # a key PyYAML cannot hash: its error, with its line
        "1: one\n1.5: x\ntrue: t\n~: n\n2001-12-14: d\n",  # keys that are not strings
        "= : value\n",  # the `value` tag
        "kind: ConfigMap\nmetadata:\n  name: \x14x\n",  # an unacceptable character
        "a: 1\n---\nb: [\n",  # a syntax error after a good document
        "---\n---\nkind: A\n---\n",  # empty documents count but are skipped
        "[" * 2000 + "]" * 2000,  # deeper than Python's stack
    ],
)
def test_documents_left_to_pyyaml_or_broken_read_the_same(text: str) -> None:
    _assert_same_reading(text)


def test_the_fast_path_composes_no_node_tree_and_needs_no_pyyaml_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_args: Any) -> Any:
        raise AssertionError("PyYAML's constructor ran")

    monkeypatch.setattr(yamlload._Loader, "construct_document", refuse)
    monkeypatch.setattr(yamlload._Loader, "get_node", refuse)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: '1', b: 2}\n"
    (document,) = load_documents_fast(text, "cm.yaml").documents
    assert not document.has_field_lines
    assert document.line_of(["data", "b"]) == document.line == 1
    assert document.obj["data"] == {"a": "1", "b": 2}


def test_a_document_with_an_alias_goes_to_pyyaml_which_shares_the_repeated_object() -> None:
    (document,) = load_documents_fast("a: &x [1]\nb: *x\n", "f.yaml").documents
    assert document.obj["a"] is document.obj["b"]  # as `yaml.safe_load` builds it
