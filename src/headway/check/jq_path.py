"""The field path of a `jqPathExpressions` entry, read without running jq.

Argo CD runs these expressions with gojq. A key is written `.name`, `."any key"`,
`["any key"]` or `.["any key"]`, spaces allowed before a quoted key or a bracket (double
quotes only: jq has no single-quoted strings); `[]`, `[N]` and slices pick list elements. An
expression that is more than such a path (a pipe, a `select`, a function, a string with an
interpolation) is not read, so it covers nothing here.
"""

from __future__ import annotations

import json
import re

__all__ = ["jq_path_keys", "normalize_pointer"]

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
        at = _skip_spaces(text, at)
    return tuple(keys)


def _step(text: str, at: int) -> tuple[str | None, int] | None:
    """One step of the path at `at`: the key it names (None for a list element) and where the
    next step starts; None when no path step starts there."""
    dotted = text[at] == "."
    if dotted and (found := _NAME.match(text, at + 1)):
        return found.group(), found.end()
    start = _skip_spaces(text, at + 1) if dotted else at
    if start == len(text):
        return (None, start) if dotted and at == 0 else None
    if dotted and (found := _STRING.match(text, start)):
        return _key(found.group(), found.end())
    if element := _ELEMENT.match(text, start):
        return None, element.end()
    if quoted := _QUOTED_KEY.match(text, start):
        return _key(quoted.group(1), quoted.end())
    return None


def _key(literal: str, end: int) -> tuple[str, int] | None:
    """A quoted key; None for one jq would read differently (an interpolation `\\(…)`) or
    refuse (a bad escape)."""
    try:
        return json.loads(literal), end
    except ValueError:
        return None


def _skip_spaces(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def normalize_pointer(text: str) -> str | None:
    """`.spec.http[].route[0].weight` or `/spec/http/0/route/0/weight` -> `/spec/http/route/weight`;
    None for a jq expression that is not a plain path.

    Indices are dropped, so a rule written for one list element is compared by field. A jq key
    is escaped as in a JSON pointer (`."a/b"` -> `/a~1b`), so both spellings compare equal.
    """
    if text.startswith("."):
        keys = jq_path_keys(text)
        if keys is None:
            return None
        text = "/" + "/".join(k.replace("~", "~0").replace("/", "~1") for k in keys)
    parts = [p for p in text.split("/") if p and not p.isdigit()]
    return "/" + "/".join(parts)
