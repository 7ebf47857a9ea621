"""Reading plain manifests with a YAML reader written in Rust, where it reads them as PyYAML does.

Headway reads YAML as PyYAML's safe loader does (YAML 1.1, close to what Kubernetes' own
reader makes of a manifest). `yaml_rs` builds the same Python objects about seven times
faster (bench/bench_yaml_load.py), but it reads YAML 1.2, and PyYAML's YAML 1.1 gives some
plain (unquoted) scalars another meaning: `on`, `yes` and `off` are booleans there, `0777`
is octal, `1:30` is 90, `1_000` is a number, `1e3` and `-.5` are strings. yaml_rs also reads
some forms neither version does (`_1` as 1, `.iNf` as infinity, `0X1F` as 31), and it hands
back a stream of one document the same way as a stream of several, so that one list cannot
be told from many documents.

So `read_documents` takes a text only when nothing in it can read differently, and says None
otherwise (the caller then reads it with PyYAML, as before):

- `doubtful` finds no plain scalar, where one can begin (a line's start, after `key: `,
  `- `, `? `, a quoted key's `:` or a flow indicator), whose text one of the readers gives
  another meaning: the boolean words of YAML 1.1, a number with a leading zero, an
  underscore, an exponent, a sign before a dot or a hex number, a `:` between digits, a
  date, a dot before a letter. Nor an anchor, alias, tag, complex key, merge key, `=`,
  directive or document end (`...`), nor a character outside the printable ASCII and
  Unicode ranges PyYAML accepts without question (a tab, a carriage return, a byte-order
  mark, NEL and the Unicode line separators: both readers differ on some of those). It
  errs on the side of doubt: a quoted `"on"` in a comment counts too, and only costs speed.
- The documents yaml_rs returns are as many as the text's lines say (`_document_lines`:
  a `---` at the start of a line begins a document, whatever context it is in), and each
  document's root line is taken from those lines as PyYAML's C parser marks it.
- A text that does not end with a line break and holds a block scalar (`|`, `>`) is left to
  PyYAML: whether the last line's break belongs to the scalar is where readers have erred.
- Anything yaml_rs refuses (a syntax error, a duplicate key, an alias limit) is left to
  PyYAML, whose errors Headway reports with their lines.

`compare_with_pyyaml` makes every read that takes this path also read the text with PyYAML
and fail loudly (`ReadersDisagree`) where the objects, their types, their key order or the
documents' lines differ. The CLI turns it on when `HEADWAY_YAML_CROSSCHECK` is set, and
`HEADWAY_YAML_RUST=0` turns yaml_rs off (`cli/yaml_reader.py`); the test suite runs with the
comparison on (tests/conftest.py), so every YAML text a test reads, in the test's process
or in a `headway` process it starts, is a comparison of the two readers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from headway.model import yamlsplit

__all__ = [
    "ReadersDisagree",
    "compare_with_pyyaml",
    "crosschecking",
    "difference",
    "disagreement",
    "doubtful",
    "read_documents",
    "use",
]

# Where a plain scalar can begin: a line's start after its indentation, after a mapping
# value's or a sequence entry's indicator and a blank, after a quoted key's `:` (JSON style,
# no blank needed), after a flow collection's `[`, `{` or `,`.
_STARTS = r"(?:^[ ]*|[:?-][ ]+|[\"']:[ ]*|[\[{,][ ]*)"
_WORD_ENDS = r"[ ]*(?:$|[#,\]}]|:(?: |$))"
_DOUBTFUL_PARTS = (
    # a tab, a carriage return, NEL, a byte-order mark, a control or unpaired character
    r"[^\n\x20-\x7e\x{a0}-\x{2027}\x{202a}-\x{d7ff}\x{e000}-\x{fefe}\x{ff00}-\x{fffd}\x{10000}-\x{10ffff}]",
    # an anchor, an alias, a tag, a complex key, the value key `=`
    _STARTS + r"(?:[&*!]|\?(?:[ ,:\]}]|$)|=(?:[ ,\]}:#]|$))",
    # a value without a key (`: a`: yaml_rs reads a null key, PyYAML refuses it)
    _STARTS + r":(?:[ ,\]}]|$)",
    # a block scalar's header with an indentation indicator or with more on its line (in a
    # flow collection: PyYAML's error)
    _STARTS + r"[|>](?:[-+]?[0-9#]|[-+][-+]|[-+]?[ ]+[^ \n#]|[-+]?[^-+ \n#0-9])",
    r"<<",  # a merge key
    # a node 128 columns in (indentation and compact `- `/`? ` entries): deep nesting, which
    # crashed yaml_rs (a stack overflow, about 10,000 levels deep on an 8 MB stack); a
    # block node's column grows at least one column for every two levels, and yaml_rs
    # refuses flow nesting past 256 itself, so what passes is under about 512 levels
    r"^[ ?-]{128}",
    # an escaped UTF-16 surrogate (yaml_rs joins a pair, PyYAML refuses each half)
    r"\\u[dD][89a-fA-F]|\\U0000[dD][89a-fA-F]",
    r"^%",  # a directive
    r"^\.\.\.(?: |$)",  # a document end
    r"[\]}][ ]*:(?: |$)",  # a flow collection as a key: `{a: 1}: x`
    # ... or as a flow mapping's first key: `{{x}}`, `{[a]}` (a later one, `{a: 1, [b]}`,
    # cannot be told from a flow sequence's entry `[a, [b]]` here: `_FLOW_ENTRY`)
    _STARTS + r"\{[ ]*[{\[]",
    # YAML 1.1's boolean words (1.2: strings)
    _STARTS + r"(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)" + _WORD_ENDS,
    # an underscore first, `.` and a letter (`.iNf`), an exponent, an underscore or a `:`
    # in a number, a leading zero before a digit or a base letter, a date
    _STARTS
    + r"[-+]?(?:_|\.[A-Za-z]|\.?[0-9][0-9.]*[eE][-+]?[0-9]|[0-9][0-9_]*(?:_|:[0-9])"
    + r"|0[0-9bBoOX_]|[0-9]{4}-[0-9])",
    _STARTS + r"[-+](?:\.|0x)",  # a sign before a dot or a hex number
)

# A flow collection after a comma: an entry of a flow sequence (`[{a: 1}, {b: 2}]`, a common
# style), or a key of a flow mapping, which PyYAML refuses and yaml_rs reads as a tuple or a
# frozenset. Where the text has one, the keys yaml_rs read are looked at (`_plain_keys`).
_FLOW_ENTRY = re.compile(r",[ ]*[{\[]")
# The types of the keys PyYAML builds from the plain texts the screen lets through.
_KEY_TYPES = frozenset((str, int, float, bool, type(None)))

# A block scalar's header: the indicator, a chomping indicator, blanks, a comment, the line
# break (wherever it stands: checking a `|` that only ends a plain scalar costs nothing).
_BLOCK_HEADER = re.compile(r"[|>][-+]?[ ]*(?:#[^\n]*)?\n")


class _Reader:
    """What this module found out once per process: the screen's compiled pattern,
    yaml_rs's reader (None until asked for, and when not installed), and the switches."""

    pattern: Any = None
    loads: Any = None
    unavailable = False
    disabled = False
    compare = False
    report: Callable[[str], None] | None = None


_READER = _Reader()


class ReadersDisagree(AssertionError):
    """yaml_rs and PyYAML read a text this module vouched for differently (crosscheck)."""


def compare_with_pyyaml(report: Callable[[str], None] | None, *, enabled: bool = True) -> None:
    """Compare every read through this module with PyYAML's (`enabled`), or stop comparing.
    `report` also gets each disagreement's text, so that code which catches every error (a
    controller reporting a failed read) cannot hide it from whoever asked."""
    _READER.compare = enabled
    _READER.report = report if enabled else None


def crosschecking() -> bool:
    """Whether reads through this module are compared with PyYAML's (`compare_with_pyyaml`)."""
    return _READER.compare


def disagreement(problem: str, text: str) -> ReadersDisagree:
    """The error for a text the readers read differently, reported as well."""
    message = f"yaml_rs and PyYAML disagree: {problem}\n{text[:2000]}"
    if _READER.report is not None:
        _READER.report(message)
    return ReadersDisagree(message)


def doubtful(text: str) -> bool:
    """Whether `text` holds anything PyYAML and yaml_rs might read differently."""
    if _READER.pattern is None:
        import re2  # type: ignore[import-untyped]  # linear time: one pass, any alternation

        options = re2.Options()
        options.never_capture = True
        _READER.pattern = re2.compile("(?m)" + "|".join(_DOUBTFUL_PARTS), options)
    try:
        return _READER.pattern.search(text) is not None
    except UnicodeEncodeError:  # an unpaired surrogate: PyYAML's to refuse
        return True


def read_documents(text: str) -> list[tuple[Any, int]] | None:
    """Each document of `text` as (object, 1-based line of its root), empty documents
    included as None, as `yamlfast.read_plain_documents` reads them; None when this reader
    cannot vouch for reading `text` as PyYAML does, or yaml_rs is not installed."""
    loads = _reader()
    if loads is None or doubtful(text):
        return None
    if ("|" in text or ">" in text) and not _block_scalars_have_content(text):
        return None
    lines = _document_lines(text)
    if lines is None:
        return None
    try:
        read = loads(text)
    except Exception:  # yaml_rs's errors: PyYAML reads the text and reports its own
        return None
    if _FLOW_ENTRY.search(text) is not None and not _plain_keys(read):
        return None
    if len(lines) == 1:
        objects = [read]
    elif not lines:
        if read is not None:
            return None
        objects = []
    elif type(read) is list and len(read) == len(lines):
        objects = read
    else:
        return None
    return list(zip(objects, lines, strict=True))


def _block_scalars_have_content(text: str) -> bool:
    """Whether every block scalar's header (`|`, `>`, with a chomping indicator) is followed by
    a line indented deeper than its own, and the text ends with a line break: the readers
    disagree on an empty block scalar (yaml_rs reads a line break) and PyYAML's C parser
    has erred on a last line without one."""
    if not text.endswith("\n"):
        return False
    for header in _BLOCK_HEADER.finditer(text):
        start = text.rfind("\n", 0, header.start()) + 1
        own = len(text) - len(text[start:].lstrip(" "))
        following = header.end()
        while True:
            end = text.find("\n", following)
            if end == -1:
                return False  # nothing but blank lines after the header
            line = text[following:end]
            if line.strip():
                break
            following = end + 1
        if len(line) - len(line.lstrip(" ")) <= own - start:
            return False
    return True


def _plain_keys(read: Any) -> bool:
    """Whether every mapping key in `read` is of a type PyYAML builds from a plain scalar
    (not a collection: PyYAML refuses those)."""
    pending = [read]
    while pending:
        value = pending.pop()
        if type(value) is dict:
            if not all(type(key) in _KEY_TYPES for key in value):
                return False
            pending.extend(value.values())
        elif type(value) is list:
            pending.extend(value)
    return True


def use(enabled: bool) -> None:
    """Read with yaml_rs where it may (the default) or never (benchmarks comparing readers;
    `HEADWAY_YAML_RUST=0` switches it off for a `headway` process, should a reader ever be
    in doubt)."""
    _READER.disabled = not enabled


def _reader() -> Any:
    if _READER.disabled:
        return None
    if _READER.loads is None and not _READER.unavailable:
        try:
            from yaml_rs import loads
        except ImportError:  # an installation without it reads everything with PyYAML
            _READER.unavailable = True
            return None
        _READER.loads = _strict(loads)
    return _READER.loads


def _strict(loads: Any) -> Any:
    def read(text: str) -> Any:
        return loads(text, parse_datetime=False)

    return read


def _document_lines(text: str) -> list[int] | None:
    """The 1-based line at which PyYAML's C parser marks each document's root, as many
    lines as the text has documents (None where `yamlsplit.document_pieces`, which says
    where documents start, does not split the text). A document's root is its first line
    that is neither blank nor a comment (the `---` line itself when something follows the
    marker); an empty document's root is marked where the next document starts, or at the
    end of the text (on the line after the last when the text does not end with a line
    break)."""
    pieces = yamlsplit.document_pieces(text)
    if pieces is None:
        return None
    roots: list[int] = []
    line = 1  # the line each piece starts at
    for index, piece in enumerate(pieces):
        starts = index > 0 or (piece.startswith("---") and piece[3:4] in ("", " ", "\n"))
        if not starts:  # the text before the first `---`: no document, or an implicit one
            root = _content_line(piece, 0)
            if root != -1:
                roots.append(line + piece.count("\n", 0, root))
        else:
            first_end = piece.find("\n")
            after = piece[3 : len(piece) if first_end == -1 else first_end].strip()
            root = -1 if first_end == -1 else _content_line(piece, first_end + 1)
            if after and not after.startswith("#"):
                roots.append(line)
            elif root != -1:
                roots.append(line + piece.count("\n", 0, root))
            else:  # empty: marked at the next start, or past the end
                end = line + piece.count("\n")
                last = index == len(pieces) - 1
                roots.append(end + 1 if last and not text.endswith("\n") else end)
        line += piece.count("\n")
    return roots


def _content_line(text: str, start: int) -> int:
    """The offset of the first line of text[start:] that is neither blank nor a comment,
    or -1."""
    end = len(text)
    while start < end:
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = end
        stripped = text[start:line_end].lstrip(" ")
        if stripped and not stripped.startswith("#"):
            return start
        start = line_end + 1
    return -1


def difference(quick: list[tuple[Any, int]], slow: list[tuple[Any, int]]) -> str | None:
    """Where two reads of one text differ (documents, lines, objects, their exact types and
    key order; NaN equals NaN, -0.0 does not equal 0.0), or None when they do not."""
    if len(quick) != len(slow):
        return f"{len(quick)} documents against {len(slow)}"
    for index, ((one, line), (other, other_line)) in enumerate(zip(quick, slow, strict=True)):
        if line != other_line:
            return f"document {index}: root line {line} against {other_line}"
        found = _value_difference(one, other, f"document {index}")
        if found is not None:
            return found
    return None


def _value_difference(one: Any, other: Any, at: str) -> str | None:
    if type(one) is not type(other):
        return f"{at}: {one!r} ({type(one).__name__}) against {other!r} ({type(other).__name__})"
    if type(one) is dict:
        if list(one) != list(other):
            return f"{at}: keys {list(one)!r} against {list(other)!r}"
        for key, value in one.items():
            found = _value_difference(value, other[key], f"{at}.{key}")
            if found is not None:
                return found
        return None
    if type(one) is list:
        if len(one) != len(other):
            return f"{at}: {len(one)} items against {len(other)}"
        for index, (item, other_item) in enumerate(zip(one, other, strict=True)):
            found = _value_difference(item, other_item, f"{at}[{index}]")
            if found is not None:
                return found
        return None
    if type(one) is float:
        same = (math.isnan(one) and math.isnan(other)) or (
            one == other and math.copysign(1.0, one) == math.copysign(1.0, other)
        )
        return None if same else f"{at}: {one!r} against {other!r}"
    return None if one == other else f"{at}: {one!r} against {other!r}"
