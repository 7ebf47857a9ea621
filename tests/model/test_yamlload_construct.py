"""The loader's own constructor (strings, string-keyed maps, lists built directly) gives the
values PyYAML's safe constructor gives, for every scalar PyYAML resolves and every tag."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.model.yamlload import _Loader, load_documents

# Plain scalars the resolver turns into something other than a string, or almost does.
EDGE_SCALARS = [
    "1",
    "-0",
    "0o17",
    "0x1F",
    "0b101",
    "0b_",
    "0x_",
    "1_000",
    "3.5",
    "1e3",
    ".inf",
    "-.Inf",
    ".nan",
    "true",
    "False",
    "yes",
    "off",
    "~",
    "null",
    "2001-12-14",
    "2001-13-45",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "!!str 12",
    "!!int '7'",
    "!!float 1",
    "!!binary aGVsbG8=",
    "!!null ''",
    "!!bool yes",
    "'quoted'",
    '"dq"',
    "plain text",
]
EDGE_KEYS = ("name", "1", "true", "~", "=", "3.5", "2001-12-14", "'1'", "!!str 2", "a.b/c")

leaves = st.sampled_from(EDGE_SCALARS) | st.text(max_size=8).map(json.dumps)


def _flow(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pairs = st.lists(st.tuples(st.sampled_from(EDGE_KEYS), children), max_size=4)
    return (
        st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
        | pairs.map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}")
        | st.sampled_from(("!!set {a, b}", "!!omap [{a: 1}, {b: 2}]", "{<<: {a: 1}, b: 2}"))
    )


documents = st.recursive(leaves, _flow, max_leaves=12)


def _reference(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # PyYAML's construct_document


@settings(max_examples=400, deadline=None)
@given(documents)
def test_values_match_pyyaml_safe_construction(text: str) -> None:
    try:
        expected = _reference(text)
    except yaml.YAMLError:
        loaded = load_documents(text, "f.yaml")
        assert loaded.diagnostics, text
        return
    loaded = load_documents(text, "f.yaml")
    assert not loaded.diagnostics, (text, loaded.diagnostics)
    got = [d.obj for d in loaded.documents]
    assert repr(got) == repr([] if expected is None else [expected]), text  # repr: NaN


def test_block_manifests_with_merge_keys_tags_and_numbers() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {<<: {a: b}, c: d}\n"
        "data:\n  2: two\n  true: yes\n  when: 2001-12-14\n  raw: !!binary aGk=\n"
        "  list: [1, '2', 0b_, .nan]\n  nested: {deep: [{x: ~}]}\n"
    )
    (document,) = load_documents(text, "c.yaml").documents
    assert repr(document.obj) == repr(_reference(text))
    assert document.obj["metadata"]["labels"] == {"a": "b", "c": "d"}
    assert document.obj["data"][2] == "two"
    assert document.obj["data"]["list"][2] == "0b_"


def test_an_unknown_tag_is_a_diagnostic_not_a_traceback() -> None:
    loaded = load_documents("a: !custom {b: 1}\n", "t.yaml")
    assert not loaded.documents
    assert "could not determine a constructor" in loaded.diagnostics[0].message
