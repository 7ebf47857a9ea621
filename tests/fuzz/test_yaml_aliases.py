"""YAML aliases that make a value infinite (an alias inside its own anchor) or enormous (a
"billion laughs") are refused when a file is read: every reader (validate, apply, check,
the controller) used to recurse until RecursionError or expand for hours."""

from __future__ import annotations

import re
from typing import Any

import pytest

from headway.model.yamlload import (
    MAX_EXPANDED_VALUES,
    AliasError,
    load_documents,
    load_documents_fast,
    load_one,
)


def _level(n: int) -> str:
    item = f"*l{n - 1}" if n else "lol"
    return f"l{n}: &l{n} [{', '.join([item] * 9)}]\n"


LAUGHS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\n" + "".join(map(_level, range(9)))


def test_an_alias_inside_its_own_anchor_is_an_error_naming_the_line() -> None:
    text = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: &s {a: *s}\n"
    loaded = load_documents(text, "svc.yaml")
    assert loaded.documents == []
    assert [str(d) for d in loaded.diagnostics] == [
        "svc.yaml:1: YAML error: the node anchored at line 4 contains an alias to itself"
    ]


def test_aliases_repeating_into_too_many_values_are_refused() -> None:
    loaded = load_documents(LAUGHS + "---\napiVersion: v1\nkind: ConfigMap\n", "lol.yaml")
    assert [d.kind for d in loaded.documents] == ["ConfigMap"]  # the next document is read
    (refused,) = loaded.diagnostics
    assert refused.line == 1
    pattern = r"YAML error: aliases repeat (\d+) nodes into (\d+) values \(.*\)"
    found = re.fullmatch(pattern, refused.message)
    assert found is not None, refused.message
    assert int(found[2]) > 9**9 > MAX_EXPANDED_VALUES  # the innermost list, 9 times 9 times ...
    assert f"(at most {MAX_EXPANDED_VALUES} are read)" in refused.message


def test_ordinary_anchors_still_load() -> None:
    text = "base: &b {a: 1}\nfirst: *b\nsecond: {<<: *b, c: 2}\n"
    (document,) = load_documents(text, "values.yaml").documents
    assert document.obj == {"base": {"a": 1}, "first": {"a": 1}, "second": {"a": 1, "c": 2}}


def test_every_single_document_reader_refuses_them_too() -> None:
    """Kustomizations, Chart.yaml, values files and argocd-cm entries are read with
    `load_one`, which applies the same limits."""
    with pytest.raises(AliasError, match="contains an alias to itself"):
        load_one("a: &a {b: *a}\n")
    with pytest.raises(AliasError, match=r"at most \d+ are read"):
        load_one(LAUGHS)
    assert load_one("base: &b [1]\nagain: *b\n") == {"base": [1], "again": [1]}


def _flow_level(n: int) -> str:
    item = f"*l{n - 1}" if n else "lol"
    return f'"l{n}":&l{n} [{", ".join([item] * 9)}]'


# A flow mapping's quoted key may meet its value with no space: `{"l1":&l1 [...]}`. The
# cheap pre-scan for anchors missed that spelling, and the bomb was read whole.
FLOW_LAUGHS = "{" + ", ".join(map(_flow_level, range(9))) + "}\n"


@pytest.mark.parametrize("load", [load_documents, load_documents_fast])
@pytest.mark.parametrize("text", [LAUGHS, FLOW_LAUGHS, "a: &a {b: *a}\n", '{"a":&a [*a]}\n'])
def test_both_readers_refuse_them_however_they_are_spelled(load: Any, text: str) -> None:
    loaded = load(text, "lol.yaml")
    assert loaded.documents == []
    (refused,) = loaded.diagnostics
    assert re.search(r"aliases repeat|contains an alias to itself", refused.message)
