"""Set, add and remove one scalar in YAML text, leaving every other byte as it was.

ruamel.yaml's round-trip loader is used only to learn where things are written (the line and
column of a key or a value); the edit itself splices characters into the text. Re-dumping the
document would reflow long lines, re-indent sequences and drop odd spacing; splicing cannot.
After each edit the new text is loaded again and compared with the data the edit meant to
produce, so an edit that would change anything else (a multi-line scalar, an alias, a flow
mapping written across lines) is refused with `YamlEditError` instead of written.

Purely computational: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from io import StringIO
from typing import Any

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from headway.model.key_paths import KeyPath, ListMatch, as_text

__all__ = [
    "Located",
    "YamlEditError",
    "load_round_trip",
    "locate",
    "plain_data",
    "remove_scalar",
    "scalar_text",
    "set_scalar",
    "value_end",
]


class YamlEditError(ValueError):
    """An edit that cannot be made safely; the message names the file, line and key."""


def load_round_trip(text: str, file: str) -> list[Any]:
    """Every document of `text` as ruamel's commented maps and sequences (positions kept)."""
    loader = YAML(typ="rt")
    loader.preserve_quotes = True
    try:
        return list(loader.load_all(StringIO(text)))
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        raise YamlEditError(f"{where}: not valid YAML: {getattr(err, 'problem', err)}") from None


def plain_data(node: Any) -> Any:
    """A loaded document as plain dicts, lists and scalars, for comparing two versions."""
    if isinstance(node, CommentedMap):
        return {str(key): plain_data(value) for key, value in node.items()}
    if isinstance(node, CommentedSeq):
        return [plain_data(item) for item in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


@dataclass(frozen=True)
class Located:
    """Where a key path leads in one document: the owner of its last step and that step."""

    owner: Any  # CommentedMap or CommentedSeq
    step: str | int
    value: Any
    line: int  # 0-based line of the value
    column: int  # 0-based column of the value's first character


def _step(node: Any, part: str | int | ListMatch) -> str | int | None:
    """The concrete key or index `part` names in `node`, or None."""
    if isinstance(node, CommentedMap) and isinstance(part, str):
        return part if part in node else None
    if not isinstance(node, CommentedSeq):
        return None
    if isinstance(part, int):
        return part if 0 <= part < len(node) else None
    if isinstance(part, ListMatch):
        for index, item in enumerate(node):
            if isinstance(item, CommentedMap) and str(item.get(part.field)) == part.value:
                return index
    return None


def locate(document: Any, path: KeyPath) -> Located | None:
    """The value at `path`, with its position; None when any step is missing."""
    node, owner, step = document, None, None
    for part in path.parts:
        step = _step(node, part)
        if step is None:
            return None
        owner, node = node, node[step]
    if owner is None or step is None:
        return None
    line, column = owner.lc.value(step) if isinstance(step, str) else owner.lc.item(step)
    return Located(owner, step, node, line, column)


def _deepest(document: Any, path: KeyPath) -> tuple[Any, int]:
    """The deepest existing node on `path` and how many parts of it exist."""
    node = document
    for depth, part in enumerate(path.parts):
        step = _step(node, part)
        if step is None:
            return node, depth
        node = node[step]
    return node, len(path.parts)


_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+-]*")


def scalar_text(value: str | bool) -> str:
    """How a new value is written: plain when YAML reads it back as the same string, else
    double-quoted (a tag `1.10` written plain would be read as the number 1.1)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if _PLAIN.fullmatch(value) and _reads_as(value) == value:
        return value
    return '"' + "".join(_escaped(char) for char in value) + '"'


def _escaped(char: str) -> str:
    """One character inside a double-quoted YAML scalar (non-printables as escapes)."""
    if char in ('"', "\\"):
        return "\\" + char
    if char.isprintable() and char not in "\u2028\u2029\ufeff":
        return char
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code <= 0xFF
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else f"\\U{code:08x}"
    )


# What YAML 1.2 readers (ruamel, Go's yaml.v3 in Helm and Kustomize) take for a number even
# where PyYAML's 1.1 rules see a string: `1234e56` is a float there.
_NUMBER_12 = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o[0-7]+"
)


def _reads_as(text: str) -> Any:
    if _NUMBER_12.fullmatch(text):
        return None
    try:
        return pyyaml.safe_load(text)  # YAML 1.1 reads more words as booleans than 1.2 does
    except (pyyaml.YAMLError, ValueError):  # `0b_`: a number to the resolver, not to int()
        return None


def value_end(line: str, column: int, flow: bool) -> int:
    """Where the scalar starting at `column` ends on its line."""
    quote = line[column : column + 1]
    if quote in ("'", '"'):
        index = column + 1
        while index < len(line):
            if line[index] == "\\" and quote == '"':
                index += 2
                continue
            if line[index] == quote:
                if quote == "'" and line[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            index += 1
        return len(line.rstrip("\r\n"))
    end = len(line.rstrip("\r\n"))
    comment = line.find(" #", column)
    if comment >= 0:
        end = min(end, comment)
    if flow:
        stops = [i for i in (line.find(c, column) for c in ",}]") if i >= 0]
        end = min([end, *stops])
    return len(line[:end].rstrip())


def _splice_value(lines: list[str], found: Located, new: str | bool) -> None:
    line = lines[found.line]
    flow = bool(found.owner.fa.flow_style())
    end = value_end(line, found.column, flow)
    old = line[found.column : end]
    text = scalar_text(new)
    if isinstance(new, str) and old[:1] in ("'", '"') and not text.startswith('"'):
        text = f"{old[0]}{new}{old[0]}"  # keep the quoting the file chose
    lines[found.line] = line[: found.column] + text + line[end:]


def _verified(new_text: str, expected: list[Any], *, file: str, path: KeyPath) -> str:
    got = [plain_data(doc) for doc in load_round_trip(new_text, file)]
    if got != expected:
        message = f"{file}: {as_text(path.parts)}: the edit would change more than this key"
        raise YamlEditError(f"{message} (written across lines, or an alias?); edit it by hand")
    return new_text


def _expected_after(
    documents: Sequence[Any], index: int, path: KeyPath, value: Any, *, remove: bool = False
) -> list[Any]:
    data = [plain_data(doc) for doc in documents]
    node = data[index]
    concrete = _concrete(documents[index], path)
    for depth, part in enumerate(concrete[:-1]):
        if isinstance(node, dict) and part not in node:
            node[part] = {}
        node = node[part]
        if not isinstance(node, dict | list):
            where = as_text(path.parts[: depth + 1])
            raise YamlEditError(f"{where} holds a scalar; {as_text(path.parts)} cannot go under it")
    if remove and isinstance(node, dict):
        node.pop(concrete[-1], None)
        _prune_empty(data[index], concrete[:-1])
    elif isinstance(node, dict | list) and not remove:
        node[concrete[-1]] = value
    else:
        raise YamlEditError(f"{as_text(path.parts)}: its parent is not a mapping")
    return data


def _concrete(document: Any, path: KeyPath) -> list[Any]:
    out: list[Any] = []
    node: Any = document
    for part in path.parts:
        step = _step(node, part) if node is not None else None
        if step is None:
            if not isinstance(part, str):
                raise YamlEditError(f"{as_text(path.parts)}: no list element matches {part}")
            out.append(part)
            node = None
            continue
        out.append(step)
        node = node[step]
    return out


def _prune_empty(data: Any, parents: Sequence[Any]) -> None:
    """Drop mappings left empty along `parents`, deepest first (they were ours to add)."""
    for depth in range(len(parents), 0, -1):
        node = data
        for part in parents[: depth - 1]:
            node = node[part]
        if node[parents[depth - 1]] == {}:
            del node[parents[depth - 1]]
        else:
            return


def set_scalar(
    text: str,
    path: KeyPath,
    value: str | bool,
    *,
    document: int = 0,
    file: str,
    add_missing: bool = True,
) -> str:
    """`text` with the scalar at `path` set to `value`, added (with any missing parent
    mappings) when absent and `add_missing`. Only the value's characters, or the added lines,
    change."""
    documents = load_round_trip(text, file)
    if not 0 <= document < len(documents):
        raise YamlEditError(f"{file}: has no document {document}")
    if not add_missing and locate(documents[document], path) is None:
        raise YamlEditError(f"{file}: {path} is missing; write it once by hand")
    expected = _expected_after(documents, document, path, value)
    if expected == [plain_data(doc) for doc in documents]:
        return text
    lines = text.splitlines(keepends=True)
    found = locate(documents[document], path)
    if found is not None:
        if isinstance(found.value, CommentedMap | CommentedSeq):
            raise YamlEditError(f"{file}:{found.line + 1}: {as_text(path.parts)} is not a scalar")
        _splice_value(lines, found, value)
    else:
        _insert(lines, documents[document], path, value, file=file)
    return _verified("".join(lines), expected, file=file, path=path)


def remove_scalar(text: str, path: KeyPath, *, document: int = 0, file: str) -> str:
    """`text` without the key at `path`, and without the parent mappings it leaves empty
    (so removing what `set_scalar` added gives back the text as it was)."""
    documents = load_round_trip(text, file)
    if not 0 <= document < len(documents) or locate(documents[document], path) is None:
        return text
    expected = _expected_after(documents, document, path, None, remove=True)
    doc = documents[document]
    doomed = path
    while len(doomed.parts) > 1:
        owner = locate(doc, KeyPath(doomed.parts[:-1]))
        if owner is None or len(owner.value) != 1 or not isinstance(owner.step, str):
            break
        doomed = KeyPath(doomed.parts[:-1])
    found = locate(doc, doomed)
    assert found is not None
    lines = text.splitlines(keepends=True)
    if not isinstance(found.step, str) or found.owner.fa.flow_style():
        raise YamlEditError(f"{file}:{found.line + 1}: {as_text(path.parts)}: remove it by hand")
    key_line, key_column = found.owner.lc.key(found.step)
    if lines[key_line][:key_column].strip():
        raise YamlEditError(f"{file}:{key_line + 1}: {as_text(path.parts)}: remove it by hand")
    del lines[key_line : _block_end(lines, key_line, key_column + 1) + 1]
    return _verified("".join(lines), expected, file=file, path=path)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: Sequence[str], first: int, column: int) -> int:
    """The last content line of the block that starts at `first`: later lines belong to it
    while they are blank, comments, or indented at least `column`."""
    last = first
    for index in range(first + 1, len(lines)):
        line = lines[index]
        if line.startswith(("---", "...")):
            break
        if not _is_content(line):
            continue
        if _indent(line) < column:
            break
        last = index
    return last


def _insert(
    lines: list[str], document: Any, path: KeyPath, value: str | bool, *, file: str
) -> None:
    parent, depth = _deepest(document, path)
    if not isinstance(parent, CommentedMap) or parent.fa.flow_style():
        where = as_text(path.parts[:depth]) or "the document"
        raise YamlEditError(f"{file}: {where} is not a block mapping; add {path} by hand once")
    missing = path.parts[depth:]
    if any(not isinstance(part, str) for part in missing):
        raise YamlEditError(f"{file}: {as_text(path.parts)}: cannot add a list element")
    column, step = _child_layout(parent)
    if parent:
        last_key = list(parent)[-1]
        key_line = parent.lc.key(last_key)[0]
        at = _block_end(lines, key_line, column + 1) + 1
    else:
        at = len(lines)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"  # the file's own
    if at > 0 and at <= len(lines) and not lines[at - 1].endswith("\n"):
        lines[at - 1] += newline
    new_lines = []
    for offset, part in enumerate(missing):
        key = scalar_text(str(part))
        head = " " * (column + offset * step) + key + ":"
        last = offset == len(missing) - 1
        new_lines.append(f"{head} {scalar_text(value)}{newline}" if last else f"{head}{newline}")
    lines[at:at] = new_lines


def _child_layout(parent: CommentedMap) -> tuple[int, int]:
    """(column of the parent's keys, indentation step of one nesting level)."""
    if not parent:
        return 0, 2
    first = next(iter(parent))
    column = parent.lc.key(first)[1]
    for key, child in parent.items():
        if isinstance(child, CommentedMap) and child and not child.fa.flow_style():
            inner = child.lc.key(next(iter(child)))[1]
            if inner > parent.lc.key(key)[1]:
                return column, inner - parent.lc.key(key)[1]
    return column, 2
