"""A changed document read again by patching the scalars on its changed lines (`yamlpatch`,
through `yamlreuse` and `load_documents_fast`) reads exactly as a full read of the new text:
the same objects (types included), document indexes, lines and diagnostics.

Differential, over every YAML file of the repository: each file is read, then read with a
value on one line edited (its documents that changed are read recording their scalar
lines), then read with that value, or another line's, replaced by each of a list of tokens -
ordinary values, values of other types, and text that would change what the line means if it
were patched (indicators, `: `, ` #`, quotes, escapes, tags, anchors, empty, tabs). The
patch must happen where it can (counted) and every read must match a fresh full read."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_yamlload_fast import _same

from headway.model import yamlload, yamlreuse
from headway.model.yamlload import load_documents, load_documents_fast

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p for d in ("examples", "tests") for p in (ROOT / d).rglob("*") if p.suffix in (".yaml", ".yml")
)
# `key: value` or `- value` on one line, value plain or quoted (a candidate to edit).
VALUE_LINE = re.compile(r"^(\s*(?:- )?(?:[\w./-]+: )?)(\S[^#\n]*?)\s*$")
TOKENS = [
    "v2", "registry.example.com:5000/app:v2", "1", "-1", "1.5", "1e3", "0x1F", "0o17", ".inf",
    ".nan", "true", "yes", "on", "No", "null", "~", "2001-12-14", "2001-12-14T21:59:43Z",
    "x:y", "a,b", "[a]", "{a: 1}", "", " x", "x ", "a: b", "a #c", "#c", "- a", "? a", ": a",
    "|", ">-", "&a x", "*a", "!!str 1", "'q'", '"q"', "'it''s'", '"a\\nb"', "'", '"', "x:",
    "<<", "=", "%x", "@x", "`x", "é", "a\tb", "---", "...", "'a: b'", '"x # y"', "\u0085x",
    "\ufeffx", "x\x07",
]  # fmt: skip


@pytest.fixture
def parses() -> Iterator[yamlreuse.EarlierParses]:
    fresh = yamlreuse.EarlierParses()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlload, "_EARLIER_PARSES", fresh)
        yield fresh


def _read_as_whole(text: str, file: str) -> None:
    got = load_documents_fast(text, file)
    expected = load_documents(text, file)
    assert got.diagnostics == expected.diagnostics, text
    assert [(d.index, d.line) for d in got.documents] == [
        (d.index, d.line) for d in expected.documents
    ], text
    for mine, theirs in zip(got.documents, expected.documents, strict=True):
        assert _same(mine.obj, theirs.obj), (text, mine.obj, theirs.obj)


def _edited(lines: list[str], index: int, token: str) -> str:
    match = VALUE_LINE.match(lines[index])
    assert match is not None
    edited = list(lines)
    edited[index] = match.group(1) + token
    return "\n".join(edited)


def test_edited_values_read_as_a_full_read(parses: yamlreuse.EarlierParses) -> None:
    rnd = random.Random(18)
    tried = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        candidates = [i for i, line in enumerate(lines) if VALUE_LINE.match(line)]
        if not candidates or "\t" in text:
            continue
        file = str(path)
        for index in rnd.sample(candidates, min(3, len(candidates))):
            load_documents_fast(text, file)
            load_documents_fast(_edited(lines, index, "first-edit"), file)
            other = rnd.choice(candidates)
            for token in rnd.sample(TOKENS, 6):
                _read_as_whole(_edited(lines, rnd.choice((index, other)), token), file)
                tried += 1
    assert tried > 1000
    assert parses.patched > 300  # the patch path was taken, not only full parses


def test_a_quoted_value_keeps_its_quotes_or_is_read_again(
    parses: yamlreuse.EarlierParses,
) -> None:
    base = 'kind: K\nmetadata:\n  name: a\nspec:\n  tag: "1.0"\n  note: \'x\'\n'
    steps = [
        base.replace('"1.0"', '"1.1"'),
        base.replace('"1.0"', '"1.2"'),  # patched: a string, not a float
        base.replace('"1.0"', "1.3"),  # no longer quoted: read again (a float)
        base.replace('"1.0"', "1.3").replace("'x'", "'y'"),  # patched
        base.replace('"1.0"', "1.3").replace("'x'", "'it''s'"),  # a doubled quote: read again
    ]
    for text in ["---\n" + base, *("---\n" + s for s in steps)]:
        _read_as_whole(text, "q.yaml")
    assert parses.patched >= 2


def test_a_change_beside_a_patched_value_is_read_again(
    parses: yamlreuse.EarlierParses,
) -> None:
    """Lines that hold no single value (a key alone, a flow mapping, a block scalar's text,
    a plain scalar's continuation) are never patched: the document is read again."""
    base = (
        "spec:\n  image: a:1\n  labels: {app: web, tier: x}\n  script: |\n    echo 1\n"
        "  long: first\n    second\n  list:\n  - one\n  flow: [\n    b\n  ]\n"
    )
    edits = [
        ("image: a:1", "image: a:2"),
        ("tier: x", "tier: y"),
        ("echo 1", "echo 2"),
        ("    second", "    third"),
        ("  list:", "  list2:"),
        ("- one", "- two"),
        ("image: a:2", "image: a:3"),
        ("    b\n", "    c, d\n"),  # in a flow list: two items, not the string "c, d"
        ("image: a:3", "image: a:4"),
    ]
    text = base
    load_documents_fast(text, "b.yaml")
    for old, new in edits:
        text = text.replace(old, new)
        _read_as_whole(text, "b.yaml")
    assert parses.patched >= 2


@pytest.mark.parametrize(
    ("first", "repeated"),
    [
        ("a: 1\n", "a: 2\n"),  # the same key twice: the last value counts
        ("a:\n  x: 1\n", "a:\n  x: 2\n"),  # a line below the first of them
        ("1: 1\n", "1.0: 2\n"),  # keys that read as equal
        ("on: 1\n", "true: 2\n"),
        ("~: 1\n", "null: 2\n"),
        ("a: 1\n", "'a': 2\n"),
        ("l:\n- a: 1\n  b: 0\n", "  a: 2\n"),  # in a list's mapping
    ],
)
def test_a_repeated_key_is_read_again(
    parses: yamlreuse.EarlierParses, first: str, repeated: str
) -> None:
    """A value line of a key that the mapping repeats later holds no value of the object:
    changing it must read as a full read does (the later value, unchanged)."""
    texts = [f"---\nkind: K\n{first}{repeated}".replace(": 1\n", f": {n}\n", 1) for n in (1, 3, 4)]
    for text in texts:
        _read_as_whole(text, "r.yaml")
