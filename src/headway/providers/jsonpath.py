"""The JSONPath subset Argo Rollouts' web provider is used with: `{$.data.ok}`.

Supported: the root `$` (optional, as in Kubernetes' JSONPath), `.name`, `['name']` /
`["name"]`, `[0]` and `[-1]`, and `[*]` / `.*`. As in Argo, a path that matches several values
yields the first one. A key or index that is not there is a `JsonPathMiss`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["JsonPathError", "JsonPathMiss", "compile_path", "find_first"]

_SEGMENT = re.compile(
    r"""\.(?P<name>[A-Za-z_][\w-]*)
      | \.(?P<dot_star>\*)
      | \[\s*(?P<index>-?\d+)\s*\]
      | \[\s*(?P<star>\*)\s*\]
      | \[\s*'(?P<single>[^']*)'\s*\]
      | \[\s*"(?P<double>[^"]*)"\s*\]""",
    re.VERBOSE,
)
_WILDCARD = object()
Segment = str | int | object


class JsonPathError(ValueError):
    """The path itself is not in the supported subset."""


class JsonPathMiss(LookupError):
    """The path is valid, but the document has nothing there."""


def compile_path(text: str) -> tuple[Segment, ...]:
    """Segments of `{$.a.b[0]}` (braces optional): ("a", "b", 0)."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    segments: list[Segment] = []
    position = 0
    while position < len(body):
        match = _SEGMENT.match(body, position)
        if match is None:
            raise JsonPathError(f"jsonPath {text!r}: cannot read {body[position:]!r}")
        segments.append(_segment(match))
        position = match.end()
    return tuple(segments)


def _segment(match: re.Match[str]) -> Segment:
    if match["index"] is not None:
        return int(match["index"])
    if match["star"] or match["dot_star"]:
        return _WILDCARD
    for group in ("name", "single", "double"):
        if match[group] is not None:
            return match[group]
    raise JsonPathError(match.group(0))  # unreachable: every alternative has a group


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _step(value: Any, segment: Segment, shown: str) -> list[Any]:
    if segment is _WILDCARD:
        return _children(value)
    if isinstance(segment, int):
        if not isinstance(value, list) or not -len(value) <= segment < len(value):
            raise JsonPathMiss(f"{shown}: no element [{segment}]")
        return [value[segment]]
    if not isinstance(value, dict) or segment not in value:
        raise JsonPathMiss(f"{shown}: no key {segment!r}")
    return [value[segment]]


def find_first(document: Any, segments: tuple[Segment, ...], shown: str = "jsonPath") -> Any:
    """The first value the path selects (Argo uses the first of several)."""
    current = [document]
    for segment in segments:
        following: list[Any] = []
        for value in current:
            try:
                following.extend(_step(value, segment, shown))
            except JsonPathMiss:
                if len(current) == 1:
                    raise
        if not following:
            raise JsonPathMiss(f"{shown}: nothing matched")
        current = following
    return current[0]
