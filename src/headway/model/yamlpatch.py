"""A changed document read again by patching the scalars its changed lines hold.

The typical GitOps commit changes one line of a large document: an image tag, a replica
count, a version. `yamlreuse` takes the documents a commit left alone from the file's earlier
read, but a changed document used to be parsed whole again (a Deployment of a few hundred
parser events: most of what a changed app's refresh cost, bench/bench_refresh.py).

When a document is parsed because it changed, its read also records each line that holds
exactly one value scalar, written in block context on that line alone, plain or quoted: the
scalar's path in the object, where on the line it starts and ends, and its style
(`read_recording`; the same objects `yamlfast.read_plain_documents` builds), and nothing
when a mapping of the document repeats a key (only the last value counts, so an earlier
one's lines hold no value of the object). The next time the document changes, `patched`
compares the two texts line by line. When they have the same
lines except lines the record holds, and each such line differs only in that scalar - the
text before it and after it unchanged, the new scalar of the same style, on one line, and
unable to mean anything but a scalar there (not empty, no indicator to start it, no `: ` or
` #` inside, no tab, no character a YAML reader refuses) - the new object is the earlier one
with those values replaced (the mappings and lists along each path copied, everything else
shared) and its value read as a full read reads it. Anything else returns None: the caller
parses the document. `tests/model/test_yamlpatch.py` compares patched reads with full reads
over every YAML file of the repository and generated edits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yaml import (
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from headway.model.yamlfast import NotPlain, PlainScalars

__all__ = ["ScalarLines", "patched", "read_recording"]

PathPart = str | int
# line (0-based, from the document's piece) -> (path, start column, end column, style)
ScalarLines = dict[int, tuple[tuple[PathPart, ...], int, int, "str | None"]]

_KEY_NEXT = object()
_MANY = ((), -1, -1, None)  # a line holding more than one value: never patched
# A plain scalar may not start with these (YAML's indicators), nor `-`, `?` or `:` followed
# by a blank; quotes start a quoted scalar.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_QUOTES = frozenset(("'", '"'))
_REFUSED = object()  # `_value`'s answer for a token that could read as something else


def read_recording(loader: Any, scalars: PlainScalars) -> list[tuple[Any, int, ScalarLines]]:
    """`yamlfast.read_plain_documents` of `loader`'s stream, each document with its scalar
    lines (numbered from the stream's first line; `NotPlain` and PyYAML's errors as there)."""
    next_event = loader.get_event
    next_event()  # the stream's start
    documents: list[tuple[Any, int, ScalarLines]] = []
    while next_event().__class__ is not StreamEndEvent:  # a document's start
        root = loader.peek_event()
        lines: ScalarLines = {}
        obj = _read_node(loader, scalars, lines)
        documents.append((obj, root.start_mark.line + 1, lines))
        next_event()  # the document's end
    return documents


def _read_node(loader: Any, scalars: PlainScalars, lines: ScalarLines) -> Any:
    """`yamlfast._read_node`, also keeping the path of each collection being read and
    recording value scalars into `lines`."""
    next_event = loader.get_event
    known = scalars.known
    open_collections: list[Any] = []
    pending_keys: list[Any] = []
    path: list[PathPart] = []  # the path of each open collection but the root
    flows: list[bool] = []  # whether each open collection is written in flow style
    flow = 0  # how many are
    # A key repeated in a mapping: the last value counts, so a line of an earlier one
    # (or of anything below it) holds no value of the object; nothing is recorded then.
    repeated = False
    while True:
        event = next_event()
        kind = event.__class__
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise NotPlain("an anchor or a tag")
            value = event.value
            if event.implicit[0]:
                value = known.get(value, known)
                if value is known:
                    value = scalars.value(loader, event.value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise NotPlain("an anchor or a tag")
            if open_collections:
                into = open_collections[-1]
                path.append(len(into) if into.__class__ is list else pending_keys[-1])
            open_collections.append({} if kind is MappingStartEvent else [])
            pending_keys.append(_KEY_NEXT)
            flows.append(bool(event.flow_style))
            flow += flows[-1]
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = open_collections.pop()
            pending_keys.pop()
            flow -= flows.pop()
            if open_collections:
                path.pop()
        else:
            raise NotPlain("an alias")
        if not open_collections:
            if repeated:
                lines.clear()
            return value
        into = open_collections[-1]
        if into.__class__ is list:
            part: Any = len(into)
            into.append(value)
        elif pending_keys[-1] is _KEY_NEXT:
            if kind is not ScalarEvent:
                raise NotPlain("a key that is a collection")
            if value in into:
                repeated = True
            pending_keys[-1] = value
            continue
        else:
            part = pending_keys[-1]
            into[part] = value
            pending_keys[-1] = _KEY_NEXT
        if kind is ScalarEvent:
            _record(lines, event, (*path, part), flow)


def _record(lines: ScalarLines, event: Any, at: tuple[PathPart, ...], flow: int) -> None:
    start, end = event.start_mark, event.end_mark
    line = start.line
    style = event.style or None  # plain: "" from the C parser, None from PyYAML's own
    if flow or style not in (None, "'", '"') or end.line != line or end.column <= start.column:
        # (a value that is not one plain or quoted token on its line, or is no text at all:
        # `key:` with nothing after it is null, and `key:y` would be another scalar)
        lines[line] = _MANY
        return
    lines[line] = _MANY if line in lines else (at, start.column, end.column, style)


def patched(
    old_text: str,
    new_text: str,
    old_obj: Any,
    lines: ScalarLines,
    value_of: Callable[[str], Any],
) -> tuple[Any, ScalarLines] | None:
    """The object of `new_text` (the document `old_text` read as `old_obj`, with `lines`
    recorded), and its scalar lines, if it differs only in recorded scalars; else None.
    `value_of` reads a plain scalar's text as a full read does (`NotPlain` gives up)."""
    if old_text.startswith("\ufeff") or new_text.startswith("\ufeff"):
        return None  # (a reader counts columns after a byte-order mark differently)
    before, after = old_text.split("\n"), new_text.split("\n")
    if len(before) != len(after):
        return None
    changes = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    if not changes:
        return None
    obj = old_obj
    now = dict(lines)
    for index in changes:
        found = lines.get(index)
        if found is None or found[1] < 0:
            return None
        at, start, end, style = found
        old_line, new_line = before[index], after[index]
        prefix, suffix = old_line[:start], old_line[end:]
        if not (new_line.startswith(prefix) and new_line.endswith(suffix)):
            return None
        if len(new_line) < len(prefix) + len(suffix):
            return None  # (the two overlap)
        token = new_line[len(prefix) : len(new_line) - len(suffix)]
        try:
            value = _value(token, style, suffix, value_of)
        except NotPlain:  # `<<` or `=`: PyYAML's constructor reads those
            return None
        if value is _REFUSED:
            return None
        try:
            obj = _with(obj, at, value)
        except RecursionError:  # a value nested deeper than Python's stack: read it whole
            return None
        now[index] = (at, start, start + len(token), style)
    return obj, now



def _value(token: str, style: str | None, suffix: str, value_of: Callable[[str], Any]) -> Any:
    """What `token` reads as in the place of a scalar of `style`, or `_REFUSED` when it could
    read as anything else there (or not at all)."""
    if not token or not token.isprintable() or "\t" in token:
        return _REFUSED
    if style in _QUOTES:
        body = token[1:-1]
        if len(token) < 2 or token[0] != style or token[-1] != style:
            return _REFUSED
        if style in body or (style == '"' and "\\" in body):
            return _REFUSED  # an escape or a doubled quote: read it whole
        return body
    if token[0] in _INDICATORS or token[0] == " " or token[-1] in (" ", ":"):
        return _REFUSED
    if ": " in token or " #" in token:
        return _REFUSED
    if suffix and not suffix.startswith((" #", "\r")) and suffix.strip(" \r"):
        return _REFUSED
    return value_of(token)


def _with(obj: Any, at: tuple[PathPart, ...], value: Any) -> Any:
    """`obj` with the value at `at` replaced: the mappings and lists along the path copied,
    everything else shared."""
    if not at:
        return value
    head, rest = at[0], at[1:]
    if type(obj) is dict:
        copy_map = dict(obj)
        copy_map[head] = _with(obj[head], rest, value)
        return copy_map
    copy_list = list(obj)
    copy_list[head] = _with(obj[head], rest, value)  # type: ignore[index]
    return copy_list
