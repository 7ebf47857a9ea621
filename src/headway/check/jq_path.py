"""The field path of a `jqPathExpressions` entry, read without running jq.

Argo CD runs these expressions with gojq. A key is written `.name`, `."any key"`,
`["any key"]` or `.["any key"]` (double quotes only: jq has no single-quoted strings); `[]`,
`[N]` and slices pick list elements. An expression that is more than such a path (a pipe, a
`select`, a function) is not read, so it covers nothing here.
"""

from __future__ import annotations

import json
import re

__all__ = ["jq_path_keys"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_ELEMENT = re.compile(r"\[\s*(?:-?\d+)?\s*(?::\s*(?:-?\d+)?\s*)?\]")
_QUOTED_KEY = re.compile(r'\[\s*("(?:[^"\\]|\\.)*")\s*\]')


def jq_path_keys(text: str) -> tuple[str, ...] | None:
    """The object keys along the path, list positions left out; None when `text` is not a
    plain jq path (`.a."b.c"[]` -> ("a", "b.c"))."""
    text = text.strip()
    if not text.startswith("."):
        return None
    keys: list[str] = []
    at = 0
    while at < len(text):
        step = _step(text, at)
        if step is None:
            return None
        key, at = step
        if key is not None:
            keys.append(key)
        while at < len(text) and text[at].isspace():
            at += 1
    return tuple(keys)


def _step(text: str, at: int) -> tuple[str | None, int] | None:
    """One step of the path at `at`: the key it names (None for a list element) and where the
    next step starts; None when no path step starts there."""
    dotted = text[at] == "."
    start = at + 1 if dotted else at
    if start == len(text):
        return (None, start) if dotted and start == 1 else None
    for pattern in (_NAME, _STRING) if dotted else ():
        found = pattern.match(text, start)
        if found:
            word = found.group()
            return (json.loads(word) if word.startswith('"') else word), found.end()
    if text[start] != "[":
        return None
    element = _ELEMENT.match(text, start)
    if element:
        return None, element.end()
    quoted = _QUOTED_KEY.match(text, start)
    if quoted:
        return json.loads(quoted.group(1)), quoted.end()
    return None
