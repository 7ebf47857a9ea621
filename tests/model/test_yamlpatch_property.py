"""`yamlpatch` against full reads over generated documents (Hypothesis): block mappings and
sequences (compact and indented), repeated keys and keys that read as one another (`a` and
`'a'`, `on` and `true`, `1` and `1.0`), quoted keys and values, block scalars, flow
collections, multi-line plain scalars and comments, in one to three documents. Each text is
read, read with one value line edited (so its document is read recording its scalar
lines), then read with that line or another one's value replaced by a generated token; the
last read must equal a fresh full read of its text: objects type for type, document
indexes, lines and diagnostics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_yamlpatch import _read_as_whole

from headway.model import yamlload, yamlreuse
from headway.model.yamlload import load_documents_fast

KEYS = ["a", "b", "'a'", '"b"', "on", "true", "1", "1.0", "~", "null", "a b", "name", "x-y"]
VALUES = [
    "v1", "'v1'", '"v1"', "1", "1.5", "yes", "~", "", "[a, b]", "{k: v}", "x:y", "a b",
    "2001-12-14", "0x1F", "'it''s'", '"a\\tb"',
]  # fmt: skip
# What replaces a value: ordinary and unusual tokens, and any short text of characters that
# mean something to YAML.
TOKENS = st.one_of(
    st.sampled_from(["v2", "2", "2.5", "registry.example.com/app:v2", "'v2'", '"v2"', "no"]),
    st.sampled_from([*VALUES, "- a", "a: b", "a #c", "#c", "&x a", "*x", "!!str 1", "|", ">-"]),
    st.text(alphabet="ab1. :#-'\"{}[],\\&*!|>?%@`~\té\U0001f600", max_size=6),
)


@st.composite
def _mapping(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(KEYS))
        kind = draw(
            st.sampled_from(["value"] * 3 + (["map", "seq", "block", "more"] if depth < 3 else []))
        )
        if kind == "value":
            comment = draw(st.sampled_from(["", "", " # c"]))
            lines.append(f"{pad}{key}: {draw(st.sampled_from(VALUES))}{comment}".rstrip())
        elif kind == "map":
            lines.append(f"{pad}{key}:")
            lines.extend(draw(_mapping(indent + 2, depth + 1)))
        elif kind == "seq":
            lines.append(f"{pad}{key}:")
            at = indent + draw(st.sampled_from([0, 2]))  # compact or indented items
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(f"{' ' * at}- {draw(st.sampled_from(VALUES))}".rstrip())
                else:
                    inner = draw(_mapping(at + 2, depth + 1))
                    lines.append(f"{' ' * at}- {inner[0].lstrip()}")
                    lines.extend(inner[1:])
        elif kind == "block":
            lines.append(f"{pad}{key}: {draw(st.sampled_from(['|', '>', '|-', '|2']))}")
            lines.extend(
                f"{pad}  {v}"
                for v in draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
            )
        else:  # a plain scalar on two lines, or a comment line
            lines.append(f"{pad}{key}: first")
            lines.append(f"{pad}  {draw(st.sampled_from(['second', '# comment', 'x: y']))}")
    return lines


@st.composite
def _stream(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lines.append("---")
        lines.extend(draw(_mapping(0, 0)))
    return lines


def _with_value(lines: list[str], index: int, token: str) -> str:
    """`lines` with the value of line `index` (after its `key: ` or `- `) replaced."""
    line = lines[index]
    cut = line.find(": ")
    cut = cut + 2 if cut != -1 else (line.find("- ") + 2 if "- " in line else -1)
    edited = list(lines)
    edited[index] = (line[:cut] if cut > 1 else line + " ") + token
    return "\n".join(edited) + "\n"


@pytest.fixture
def parses() -> Iterator[yamlreuse.EarlierParses]:
    fresh = yamlreuse.EarlierParses()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlload, "_EARLIER_PARSES", fresh)
        yield fresh


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_stream(), st.data())
def test_a_patched_read_is_a_full_read(
    parses: yamlreuse.EarlierParses, lines: list[str], data: st.DataObject
) -> None:
    parses.clear()
    editable = [i for i, line in enumerate(lines) if line != "---"]
    index = data.draw(st.sampled_from(editable))
    other = data.draw(st.sampled_from([index, *editable]))
    load_documents_fast("\n".join(lines) + "\n", "p.yaml")
    load_documents_fast(_with_value(lines, index, "first-edit"), "p.yaml")
    _read_as_whole(_with_value(lines, other, data.draw(TOKENS)), "p.yaml")
