"""yaml_rs reads a text only where it reads it as PyYAML does (headway.model.yamlrust).

Each test compares the two readers on texts built to find where YAML 1.2 (yaml_rs) and
PyYAML's YAML 1.1 part ways: every text the fast reader vouches for must give the same
documents, objects, exact types, key order and root lines as PyYAML's reader; every form
known to read differently must be left to PyYAML. (The whole suite also compares them on
every text it reads: tests/conftest.py sets HEADWAY_YAML_CROSSCHECK.)
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from headway.cli import yaml_reader
from headway.model import yamlfast, yamlload, yamlrust

REPOSITORY = Path(__file__).resolve().parents[2]

# Plain scalars on both sides of every difference between the readers, and ordinary ones.
SCALARS = [
    "1",
    "-1",
    "+1",
    "0",
    "00",
    "017",
    "0777",
    "0888",
    "0o17",
    "0O17",
    "0x1F",
    "0X1F",
    "-0x1F",
    "+0x1f",
    "0b101",
    "0B1",
    "-0b1",
    "1_000",
    "_1",
    "1_",
    "1.5",
    "-1.5",
    "+1.5",
    "1.",
    "-1.",
    "00.5",
    ".5",
    "-.5",
    "+.5",
    "1e3",
    "1E3",
    "1e+3",
    "1.5e+3",
    "1.5E-3",
    "-1.5e+3",
    "1.0e3",
    "12e",
    ".inf",
    "-.inf",
    "+.inf",
    ".Inf",
    ".INF",
    ".iNf",
    ".nan",
    ".NaN",
    ".NAN",
    ".Nan",
    "inf",
    "nan",
    "Infinity",
    "1:30",
    "12:30:45",
    "-1:30",
    "1:30.5",
    "190:20:30.15",
    "10.42.0.1:6443",
    "2020-01-02",
    "2020-1-2",
    "2020-01-02T10:00:00Z",
    "true",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "y",
    "n",
    "Y",
    "N",
    "null",
    "Null",
    "NULL",
    "~",
    "nULL",
    "=",
    "<<",
    "10s",
    "0s",
    "100Mi",
    "500m",
    "1.2.3",
    "0.1.0",
    "1.2.3-rc.1",
    "8080-tcp",
    "sha256:0abc",
    "a",
    "a:b",
    "1,000",
    "0.0.0.0",
    "1e",
    "1e5x",
    "43737e1f",
    "0x",
    "0b",
    "0o",
    "+",
    "-.",
    "0_",
    "1__0",
    "0x_1",
    "3.14.15",
    "?",
    "|",
    ">",
    "|-",
    ">+",
    "-",
    "@x",
    "`x",
    "%x",
    "...",
    "---",
    "#x",
    "&a",
    "*a",
    "!!str",
    "!t",
    "a b",
    "'x'",
    '"x"',
    "'on'",
    '"017"',
    "x # c",
    "- x",
    "? x",
    "&a x",
    "1 2",
]
PLACES = (
    "a: {}\n",
    "- {}\n",
    "{}: v\n",
    "[{}]\n",
    "{{a: {}}}\n",
    "{{{}: 1}}\n",
    '{{"a":{}}}\n',
    "{}\n",
    "a: b\n  {}\n",
    "--- {}\n",
    "a:\n  - {}\n",
    "[a, {}]\n",
    "a: [x, {}, y]\n",
    "? a\n: {}\n",
)
# Plain scalars that the readers take differently (or PyYAML refuses), seen in each place.
# (The screen also refuses some forms yaml_rs happens to read as PyYAML does, such as
# `-0x1F` and `1_000`: it refuses by the shape of YAML 1.2's differences, not case by case.)
DIFFERENT = [
    "on",
    "Yes",
    "OFF",
    "017",
    "0777",
    "0o17",
    "0X1F",
    "_1",
    "1:30",
    "12:30:45",
    "1:30.5",
    "1e3",
    "1E3",
    "1.5e3",
    "-.5",
    "+.5",
    ".iNf",
    ".Nan",
    "=",
    "<<",
]
CONSERVATIVE = ["-0x1F", "1_000"]
# Strings that need quoting, or read well only in some places.
AWKWARD = [
    "a",
    "x y",
    "é",
    "line\nbreak",
    "  lead",
    "q'uote",
    'd"q',
    "#h",
    "a #b",
    "- x",
    "k: v",
    "[x]",
    "{y}",
    "",
    "~",
    "null",
    "1.2.3",
    "\\back",
    "😀",
]


def _pyyaml(text: str) -> list[tuple[Any, int]] | str:
    """PyYAML's plain read of `text` (`yamlload`'s reader when yaml_rs is not used), or why
    it gives none."""
    try:
        return yamlload._read_events(text)
    except (yamlfast.NotPlain, yaml.YAMLError) as err:
        return f"PyYAML does not read it as plain documents: {type(err).__name__}"


def _disagreements(texts: list[str]) -> tuple[int, list[tuple[str, str]]]:
    """How many of `texts` yaml_rs read, and every one it read otherwise than PyYAML."""
    taken = 0
    found: list[tuple[str, str]] = []
    for text in texts:
        quick = yamlrust.read_documents(text)
        if quick is None:
            continue
        taken += 1
        slow = _pyyaml(text)
        problem = slow if isinstance(slow, str) else yamlrust.difference(quick, slow)
        if problem is not None:
            found.append((text, problem))
    return taken, found


def test_every_scalar_in_every_place_reads_as_pyyaml_reads_it() -> None:
    texts = [place.format(scalar) for scalar, place in itertools.product(SCALARS, PLACES)]
    taken, found = _disagreements(texts)
    assert found == []
    assert taken > len(texts) // 3  # the fast reader does take most ordinary texts


@pytest.mark.parametrize("scalar", DIFFERENT + CONSERVATIVE)
def test_forms_read_differently_are_left_to_pyyaml(scalar: str) -> None:
    for place in PLACES:
        text = place.format(scalar)
        assert yamlrust.read_documents(text) is None, text


def test_the_differences_left_to_pyyaml_are_real() -> None:
    """Without the screen, yaml_rs would read these texts otherwise than PyYAML: what the
    screen refuses is not refused for nothing (and a newer yaml_rs that reads them as PyYAML
    does would show here)."""
    from yaml_rs import loads

    differing = []
    for scalar in DIFFERENT:
        text = f"a: {scalar}\n"
        slow = _pyyaml(text)
        try:
            quick: Any = [(loads(text), 1)]
        except Exception:  # yaml_rs refuses it: a difference too
            differing.append(scalar)
            continue
        if isinstance(slow, str) or yamlrust.difference(quick, slow) is not None:
            differing.append(scalar)
    assert differing == DIFFERENT


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a: 1\n", [1]),
        ("# head\n\n  # more\na: 1\n", [4]),
        ("---\na: 1\n", [2]),
        ("--- # c\n\na: 1\n", [3]),
        ("--- a\n", [1]),
        ("a: 1\n---\nb: 2\n---\n\n- c\n", [1, 3, 6]),
        ("a: 1\n---\n", [1, 3]),  # an empty document at the end: marked past the last line
        ("a: 1\n---", [1, 3]),
        ("---\n---\na: 1\n", [2, 3]),  # the empty document: marked at the next start
        ("---\n# only a comment\n", [3]),
        ("", []),
        ("# nothing\n", []),
        ("a: |\n  x\n  ---x\n", [1]),  # `---x` is no document start
    ],
)
def test_document_root_lines_are_pyyaml_s(text: str, lines: list[int]) -> None:
    quick = yamlrust.read_documents(text)
    assert quick is not None
    assert [line for _, line in quick] == lines
    assert yamlrust.difference(quick, yamlload._read_events(text)) is None


def test_flow_sequences_of_mappings_are_read_by_yaml_rs() -> None:
    """A comma before `{` or `[` is most often a flow sequence's entry, a common style
    (`env: [{name: A, value: b}, ...]`): yaml_rs reads it; only a collection that really is
    a key sends the text to PyYAML."""
    text = "env: [{name: A, value: b}, {name: C, value: d}]\nm: {a: [1, [2]], b: 1}\n"
    quick = yamlrust.read_documents(text)
    assert quick is not None
    assert yamlrust.difference(quick, yamlload._read_events(text)) is None


@pytest.mark.parametrize(
    "text",
    [
        "- " * 20_000 + "a\n",  # yaml_rs dies of it (a stack overflow)
        "".join(" " * depth + "-\n" for depth in range(200)),
        "".join(" " * depth + "a:\n" for depth in range(200)),
        "[" * 50_000 + "]" * 50_000 + "\n",
    ],
    ids=["compact", "indented", "mappings", "flow"],
)
def test_deep_nesting_never_reaches_yaml_rs(text: str) -> None:
    """yaml_rs overflowed its stack (the process died) on block nesting about 10,000 levels
    deep (20,000 compact `- ` entries on one line do it); deep texts go to PyYAML, which
    reports or reads them as before."""
    assert yamlrust.read_documents(text) is None


def test_one_document_that_is_a_list_is_not_taken_for_many() -> None:
    quick = yamlrust.read_documents("- [1]\n- [2]\n")
    assert quick == [([[1], [2]], 1)]
    assert yamlrust.read_documents("- [1]\n---\n- [2]\n") == [([[1]], 1), ([[2]], 3)]


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n",  # an empty block scalar (yaml_rs: a line break)
        "a: |\nb: 1\n",
        "- |\n- x\n",
        "a: |\n  x",  # no final line break
        "a: |2\n   x\n",  # an indentation indicator
        "[a, |]\n",  # a block scalar in a flow collection (PyYAML: an error)
        "{a: |}\n",
        "a: x\tb\n",  # a tab
        "a: 1\r\nb: 2\r\n",  # carriage returns
        "\ufeffa: 1\n",  # a byte-order mark
        "a: 'x\u2028y'\n",  # a Unicode line separator
        "a: 'x\x85y'\n",  # NEL
        "%YAML 1.1\n---\na: on\n",
        "a: 1\n...\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "? [1]\n: 2\n",
        "{{args.x}}: 1\n",
        "a: {{args.x}}\n",
        "[a]: 1\n",
        "{a: 1, [b]: 2}\n",
        "{a: 1, {b: 2}}\n",  # a later key that is a collection (yaml_rs: a frozenset key)
        "x: {a: 1, [b]}\n",
        'a: "\\ud83d\\ude00"\n',  # an escaped surrogate pair (PyYAML refuses each half)
        'a: "\\U0000D800"\n',
        ": a\n",  # a value without a key (yaml_rs: a null key; PyYAML refuses it)
        "- : a\n",
        "a: 1\na: 2\n",  # a duplicate key: yaml_rs refuses it, PyYAML's reading stands
        "a: [1\n",  # a syntax error: PyYAML reports it
    ],
)
def test_texts_the_readers_differ_on_go_to_pyyaml(text: str) -> None:
    assert yamlrust.read_documents(text) is None


def _random_object(rng: random.Random, depth: int = 0) -> Any:
    words = [*DIFFERENT, *AWKWARD]
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        if rng.random() < 0.7:
            return "".join(rng.choice(words) for _ in range(rng.randint(1, 2)))
        return rng.choice([0, 1, -1, 17, 1.5, -0.0, float("inf"), True, False, None, 10**20])
    if roll < 0.7:
        return {rng.choice(words): _random_object(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_random_object(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _random_text(rng: random.Random) -> str:
    """PyYAML's own dump of random documents in a random style, with some quotes taken off
    (plain scalars of awkward text), a comment put in and the last line break dropped."""
    documents = [_random_object(rng) for _ in range(rng.randint(1, 3))]
    text = yaml.safe_dump_all(
        documents,
        default_flow_style=rng.choice([False, True, None]),
        width=rng.choice([20, 80, 1000]),
        allow_unicode=rng.random() < 0.5,
        explicit_start=rng.random() < 0.5,
        explicit_end=rng.random() < 0.1,
        indent=rng.choice([2, 4]),
        sort_keys=False,
    )
    if rng.random() < 0.5:
        text = re.sub(r"'([^'\n]*)'", lambda m: m[1] if rng.random() < 0.5 else m[0], text)
    if rng.random() < 0.3:
        lines = text.split("\n")
        lines.insert(rng.randrange(len(lines)), " " * rng.choice([0, 2, 4]) + "# c")
        text = "\n".join(lines)
    return text.rstrip("\n") if rng.random() < 0.2 else text


def test_random_documents_in_random_styles_read_as_pyyaml_reads_them() -> None:
    rng = random.Random(20261203)
    texts = [_random_text(rng) for _ in range(3000)]
    taken, found = _disagreements(texts)
    assert found == []
    assert taken > 300


def test_every_yaml_file_of_the_repository_reads_as_pyyaml_reads_it() -> None:
    """Examples, fixtures (public Argo repositories' files among them), docs and deploy."""
    texts = []
    for folder in ("examples", "tests", "docs", "deploy"):
        for path in sorted((REPOSITORY / folder).rglob("*")):
            if path.suffix in (".yaml", ".yml") and path.is_file():
                try:
                    texts.append(path.read_text(encoding="utf-8"))
                except UnicodeDecodeError:
                    continue
    taken, found = _disagreements(texts)
    assert found == []
    assert taken > len(texts) // 2


def test_a_disagreement_fails_loudly_and_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the crosscheck on, a read yaml_rs got wrong raises and lands in the report."""
    report = tmp_path / "report.txt"
    monkeypatch.setattr(yamlrust._READER, "report", yaml_reader.appender(str(report)))
    monkeypatch.setattr(yamlrust._READER, "compare", True)
    monkeypatch.setattr(yamlrust._READER, "loads", lambda text: {"a": "on"})  # a YAML 1.2 answer
    with pytest.raises(yamlrust.ReadersDisagree, match=r"'on' \(str\) against 1 \(int\)"):
        yamlload.load_documents("a: 1\n", "f.yaml")
    assert "disagree" in report.read_text()


def test_without_yaml_rs_pyyaml_reads_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlrust._READER, "loads", None)
    monkeypatch.setattr(yamlrust._READER, "unavailable", True)
    assert yamlrust.read_documents("a: 1\n") is None
    loaded = yamlload.load_documents("a: 1\n---\nb: on\n", "f.yaml")
    assert [document.obj for document in loaded.documents] == [{"a": 1}, {"b": True}]
