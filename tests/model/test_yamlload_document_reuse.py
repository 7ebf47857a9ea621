"""A file read again (`load_documents_fast`) takes the documents its earlier text also held
from the earlier read (`headway.model.yamlreuse`) and reads exactly what a read of the whole
file reads: the same objects (types included), indexes, lines and diagnostics. Differential
tests against `load_documents` (which never reuses) over every YAML file of the repository
edited one piece at a time, and over generated streams with the text a textual split could
get wrong: comments, block scalars holding an indented `---`, `---` with content on its line,
`...`, directives, byte-order marks, CRLF and other line breaks, broken YAML."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_yamlload_fast import TOKENS, _same

from headway.model import yamlload, yamlreuse, yamlsplit
from headway.model.yamlload import load_documents, load_documents_fast
from headway.model.yamlpatch import ScalarLines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fresh_parses() -> Iterator[yamlreuse.EarlierParses]:
    with _fresh() as parses:
        yield parses


@contextmanager
def _fresh() -> Iterator[yamlreuse.EarlierParses]:
    """A fresh `EarlierParses` behind `load_documents_fast` (Hypothesis examples share the
    test's fixtures, so each example opens its own)."""
    parses = yamlreuse.EarlierParses()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlload, "_EARLIER_PARSES", parses)
        yield parses


def _assert_read_again_as_whole(earlier: str, later: str, file: str = "f.yaml") -> None:
    """Read `earlier`, then `later` under the same file name: `later` reads as a whole read
    of it reads (`load_documents` never takes documents from an earlier read)."""
    load_documents_fast(earlier, file)
    got = load_documents_fast(later, file)
    expected = load_documents(later, file)
    assert got.diagnostics == expected.diagnostics, (earlier, later)
    assert [(d.index, d.line, d.file) for d in got.documents] == [
        (d.index, d.line, d.file) for d in expected.documents
    ], (earlier, later)
    for mine, theirs in zip(got.documents, expected.documents, strict=True):
        assert _same(mine.obj, theirs.obj), (earlier, later, mine.obj, theirs.obj)


def _pieces(text: str) -> list[str]:
    pieces = yamlsplit.document_pieces(text)
    assert pieces is not None
    return pieces


def _repository_yaml() -> list[Path]:
    found = [
        path
        for top in ("tests", "examples", "docs", "bench", "deploy")
        if (ROOT / top).is_dir()
        for pattern in ("*.yaml", "*.yml")
        for path in (ROOT / top).rglob(pattern)
    ]
    return sorted(p for p in found if ".headway" not in p.parts)


def _edits(text: str) -> Iterator[str]:
    """Versions of `text` another commit could have held: a comment line pushed into each
    piece (every later line moves), a piece dropped, the pieces after the first reversed."""
    parts = yamlsplit.document_pieces(text)
    if parts is None:
        yield "# edited\n" + text
        return
    for index in range(len(parts)):
        yield "".join(parts[:index]) + f"# edited {index}\n" + "".join(parts[index:])
        yield "".join(parts[:index] + parts[index + 1 :])
    if len(parts) > 2 and all(p.endswith("\n") for p in parts):
        yield parts[0] + "".join(reversed(parts[1:]))


def test_every_yaml_file_of_the_repository_reads_the_same_after_each_edit() -> None:
    files = _repository_yaml()
    assert len(files) > 100  # the repository's fixtures and examples, not an empty glob
    checked = 0
    for number, path in enumerate(files):
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
        for edit, other in enumerate(_edits(text)):
            name = f"{number}/{edit}/{path.name}"
            with _fresh():
                _assert_read_again_as_whole(other, text, name)
            with _fresh():
                _assert_read_again_as_whole(text, other, name)
            checked += 1
    assert checked > len(files)


def test_an_unchanged_document_is_taken_from_the_earlier_read_with_its_lines_moved(
    fresh_parses: yamlreuse.EarlierParses,
) -> None:
    first = "kind: A\nspec: {v: 1}\n---\nkind: B\nspec:\n  v: 2\n---\nkind: C\n"
    earlier = load_documents_fast(first, "f.yaml").documents
    later_text = first.replace("spec: {v: 1}\n", "spec:\n  v: 1\n  w: 9\n")
    later = load_documents_fast(later_text, "f.yaml").documents
    assert [d.line for d in earlier] == [1, 4, 8]
    assert [d.line for d in later] == [1, 6, 10]  # B and C moved down two lines
    assert later[1].obj is earlier[1].obj and later[2].obj is earlier[2].obj
    assert later[0].obj == {"kind": "A", "spec": {"v": 1, "w": 9}}
    assert fresh_parses.reused == 2


def test_only_the_changed_pieces_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [f"kind: K\nmetadata: {{name: n{i}}}\n" for i in range(6)]
    load_documents_fast("---\n".join(documents), "f.yaml")
    parsed: list[str] = []
    real = yamlload._read_plain
    recording, plain_value = yamlload._RECORDING

    def counting(text: str) -> list[yamlreuse.ParsedDocument]:
        parsed.append(text)
        return real(text)

    def counting_recorded(text: str) -> list[tuple[Any, int, ScalarLines]]:
        parsed.append(text)
        return recording(text)

    monkeypatch.setattr(yamlload, "_read_plain", counting)
    monkeypatch.setattr(yamlload, "_RECORDING", (counting_recorded, plain_value))
    documents[2] = "kind: K\nmetadata: {name: changed}\n"
    documents[3] = "kind: K\nmetadata: {name: changed-too}\n"
    documents[5] = "kind: K\nmetadata: {name: last}\n"
    read = load_documents_fast("---\n".join(documents), "f.yaml")
    assert [d.obj["metadata"]["name"] for d in read.documents] == [
        "n0", "n1", "changed", "changed-too", "n4", "last",
    ]  # fmt: skip
    # Neighbouring changed pieces are parsed in one pass.
    assert parsed == ["---\n" + documents[2] + "---\n" + documents[3], "---\n" + documents[5]]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        # An indented `---` inside a block scalar is content, not a document start.
        ("a: |\n  x\n  ---\n  y\n---\nb: 1\n", "a: |\n  x\n  ---\n  z\n---\nb: 1\n"),
        ("a: >-\n  ---\n---\nb: 1\n", "a: >-\n  ---\n  more\n---\nb: 1\n"),
        # Content on the marker's line; a tab after it; `---x` is no marker at all.
        ("--- {a: 1}\n--- b\n---\tc: 2\n", "--- {a: 2}\n--- b\n---\tc: 2\n"),
        ("a: 1\n---x: 2\n---\nc: 3\n", "a: 9\n---x: 2\n---\nc: 3\n"),
        # Document end markers: a document after `...` needs its own `---`.
        ("a: 1\n...\n---\nb: 2\n...\n", "a: 2\n...\n---\nb: 2\n...\n"),
        ("a: 1\n...\nb: 2\n---\nc: 3\n", "a: 1\n...\nb: 3\n---\nc: 3\n"),
        # Comments and empty documents.
        ("# top\n---\n# only a comment\n---\nk: v\n", "# 2\n---\n# only a comment\n---\nk: v\n"),
        ("---\n---\nk: v\n---\n", "---\n---\nk: w\n---\n"),
        # Line breaks: CRLF splits; a lone CR, NEL, LS and PS read the whole file.
        ("a: 1\r\n---\r\nb: 2\r\n", "a: 2\r\n---\r\nb: 2\r\n"),
        ("a: 1\r---\rb: 2\r", "a: 2\r---\rb: 2\r"),
        ("a: 1\n---\nb: 2\x85---\nc: 3\n", "a: 2\n---\nb: 2\x85---\nc: 3\n"),
        ("a: 1\n---\nb: 2\u2028---\nc: 3\n", "a: 2\n---\nb: 2\u2028---\nc: 3\n"),
        # A directive applies to the next document: the whole file is read.
        ("a: 1\n---\nb: 2\n", "a: 1\n%YAML 1.1\n---\nb: 2\n"),
        ("%TAG !e! tag:example.com,2000:\n---\nb: !e!x 2\n", "%TAG !e! tag:e.com:\n---\nb: 2\n"),
        # Byte-order marks: at the start, and at the start of a later line.
        ("\ufeffa: 1\n---\nb: 2\n", "\ufeffa: 2\n---\nb: 2\n"),
        ("a: 1\n---\nb: 2\n", "a: 1\n\ufeff---\nb: 2\n"),
        # A marker inside a quoted scalar or a flow collection is an error there.
        ('a: 1\n---\nb: "x\n', 'a: 1\n---\nb: "x\n---\ny"\n'),
        ("a: [1,\n---\n2]\n---\nb: 1\n", "a: [1,\n---\n3]\n---\nb: 1\n"),
        # Anchors, aliases and tags are read through PyYAML's node trees, as before.
        ("a: &x 1\nb: *x\n---\nc: 1\n", "a: &x 2\nb: *x\n---\nc: 1\n"),
        ("a: 1\n---\nc: 1\n", "a: 1\n---\nc: !!str 1\n"),
        # A syntax error after a good document keeps the good one, with its line.
        ("a: 1\n---\nb: [\n", "a: 1\n---\nb: [\n---\nc: 1\n"),
        ("a: 1\n---\nb: 2\n", "a: 1\n---\nb: 2\n---\nc: [\n"),
        # The same text again, and a file emptied.
        ("a: 1\n---\nb: 2\n", "a: 1\n---\nb: 2\n"),
        ("a: 1\n---\nb: 2\n", ""),
    ],
)
def test_text_a_split_could_get_wrong_reads_as_the_whole_file(earlier: str, later: str) -> None:
    _assert_read_again_as_whole(earlier, later)
    with _fresh():
        _assert_read_again_as_whole(later, earlier)


def _block_scalar(body: str) -> str:
    return "note: |\n" + "".join(f"  {line}\n" for line in body.split("\n"))


DOCUMENTS = [
    "kind: A\nmetadata: {name: a}\n",
    "kind: B\nspec:\n  list: [1, 2]\n  when: 2001-12-14\n",
    "# a comment\nkind: C\n",
    _block_scalar("first\n---\n...\nlast"),
    _block_scalar("--- x"),
    "data: >-\n  folded\n  ---\n",
    "key: 'quoted: ---'\n",
    "{a: 1, b: [x, y]}\n",
    "- one\n- two\n",
    "",
    "# only a comment\n",
    "plain\n  continued\n",
    "a: 1\n...\n",
    "x: yes\ny: 0o17\nz: .nan\n",
]
MARKERS = ["---\n", "--- ", "---\t", "--- # c\n", "---\n\n"]


@st.composite
def streams(draw: st.DrawFn) -> str:
    documents = draw(st.lists(st.sampled_from(DOCUMENTS), min_size=1, max_size=6))
    markers = draw(st.lists(st.sampled_from(MARKERS), min_size=len(documents)))
    text = documents[0] + "".join(m + d for m, d in zip(markers, documents[1:], strict=False))
    if draw(st.booleans()):
        text = "---\n" + text
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@st.composite
def edited(draw: st.DrawFn, text: str) -> str:
    """`text` with some pieces changed, dropped, repeated or moved."""
    parts = yamlsplit.document_pieces(text) or [text]
    shuffled = draw(st.randoms(use_true_random=False))
    for _ in range(draw(st.integers(0, 3))):
        index = shuffled.randrange(len(parts))
        choice = draw(st.sampled_from(["change", "drop", "repeat", "move", "token"]))
        if choice == "change":
            parts[index] = parts[index].replace("a", "b", 1).replace("1", "2", 1)
        elif choice == "drop" and len(parts) > 1:
            del parts[index]
        elif choice == "repeat":
            parts.insert(index, parts[index])
        elif choice == "move":
            parts.insert(shuffled.randrange(len(parts) + 1), parts.pop(index))
        else:
            parts[index] += draw(st.sampled_from(TOKENS))
    return "".join(parts)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=streams())
def test_generated_streams_read_again_as_the_whole_file(data: st.DataObject, text: str) -> None:
    other = data.draw(edited(text))
    with _fresh():
        _assert_read_again_as_whole(other, text)
    with _fresh():
        _assert_read_again_as_whole(text, other)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    shared=st.lists(st.sampled_from(TOKENS), max_size=30).map("".join),
    before=st.lists(st.sampled_from(TOKENS), max_size=6).map("".join),
    after=st.lists(st.sampled_from(TOKENS), max_size=6).map("".join),
)
def test_free_form_text_read_again_reads_as_the_whole_file(
    shared: str, before: str, after: str
) -> None:
    """Mostly broken YAML: whatever the earlier read held, the later one reads as a whole
    read does (its errors and lines included)."""
    for earlier, later in ((before + shared, after + shared), (shared + before, shared + after)):
        with _fresh():
            _assert_read_again_as_whole(earlier, later)


def test_the_last_reads_are_bounded_by_files_and_by_characters() -> None:
    parses = yamlreuse.EarlierParses(max_files=2, max_chars=1_000)
    read = yamlload._read_plain
    for name in ("a", "b", "c"):
        parses.read("k: 1\n---\nk: 2\n", name, read)
    assert [parses.reused, _reread(parses, "a")] == [0, 0]  # `a` was let go
    assert _reread(parses, "c") == 1
    parses.read("k: " + "x" * 2_000 + "\n", "big", read)
    assert _reread(parses, "c") == 0  # too many characters: the big text pushed it out


def _reread(parses: yamlreuse.EarlierParses, name: str) -> int:
    """Documents taken from `name`'s earlier read when it is read again, one piece changed."""
    before = parses.reused
    parses.read("k: 1\n---\nk: 3\n", name, yamlload._read_plain)
    return parses.reused - before


def test_a_piece_is_never_served_for_other_text() -> None:
    """Pieces that differ in one character anywhere (spaces and line ends included) are
    parsed, not taken from the earlier read."""
    base = "kind: A\nspec: {v: 1}\n---\nkind: B\nspec: {v: 2}\n"
    rng = random.Random(7)
    for _ in range(200):
        at = rng.randrange(len(base))
        other = base[:at] + rng.choice(" \n:ab1{}-#") + base[at + 1 :]
        with _fresh():
            _assert_read_again_as_whole(base, other)


def test_pieces_join_back_to_the_text() -> None:
    for text in ("", "a: 1\n", "---\na\n---\nb", "a\n---\n---\n", "x\n--- y\n---\tz\n---"):
        assert "".join(_pieces(text)) == text
    assert _pieces("a\n---\nb\n--- c\n---x\n") == ["a\n", "---\nb\n", "--- c\n---x\n"]
    assert yamlsplit.document_pieces("%YAML 1.1\n---\na\n") is None


def test_forgetting_earlier_reads_parses_every_file_whole(
    fresh_parses: yamlreuse.EarlierParses,
) -> None:
    load_documents_fast("a: 1\n---\nb: 2\n", "f.yaml")
    yamlload.forget_earlier_reads()
    load_documents_fast("a: 1\n---\nb: 3\n", "f.yaml")
    assert fresh_parses.reused == 0
    load_documents_fast("a: 1\n---\nb: 4\n", "f.yaml")
    assert fresh_parses.reused == 1
