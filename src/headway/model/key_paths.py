"""Key paths into YAML data, as a promotion pipeline names the keys it writes.

The syntax is the one `format_path` prints, plus a list selector:

* `image.tag` — mapping keys separated by dots;
* `podAnnotations["headway.dev/nonce"]` — a key that itself contains dots or slashes;
* `containers[0]` — a list element by index;
* `containers[name=api]` — the list element whose `name` is `api` (Kustomize `images:`
  entries and a pod's containers are found this way, since their order is not meaningful).

Purely computational: `parse_key_path` turns text into parts and `resolve` follows parts
through loaded data; neither reads files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "KeyPart",
    "KeyPath",
    "KeyPathError",
    "ListMatch",
    "as_text",
    "concrete_parts",
    "parse_key_path",
    "resolve",
]


class KeyPathError(ValueError):
    """Text that is not a key path; the message says where it stops making sense."""


@dataclass(frozen=True)
class ListMatch:
    """`[field=value]`: the list element whose `field` equals `value`."""

    field: str
    value: str

    def __str__(self) -> str:
        return f"[{self.field}={self.value}]"


KeyPart = str | int | ListMatch


@dataclass(frozen=True)
class KeyPath:
    parts: tuple[KeyPart, ...]

    def __str__(self) -> str:
        out = ""
        for part in self.parts:
            if isinstance(part, int):
                out += f"[{part}]"
            elif isinstance(part, ListMatch):
                out += str(part)
            elif "." in part or "/" in part or not part:
                out += f'["{part}"]'
            else:
                out += f".{part}" if out else part
        return out

    def child(self, part: KeyPart) -> KeyPath:
        return KeyPath((*self.parts, part))


_NAME = re.compile(r"[A-Za-z0-9_\-]+")
_QUOTED = re.compile(r'\["([^"]+)"\]')
_INDEX = re.compile(r"\[(\d+)\]")
_MATCH = re.compile(r"\[([A-Za-z0-9_\-]+)=([^\]]+)\]")


def parse_key_path(text: str) -> KeyPath:
    """`image.tag` -> ("image", "tag"); raises `KeyPathError` naming the bad position."""
    parts: list[KeyPart] = []
    position = 0
    while position < len(text):
        if position and text[position] == "." and not text.startswith(".[", position):
            position += 1
        part, position = _next_part(text, position)
        parts.append(part)
    if not parts:
        raise KeyPathError("an empty key path")
    return KeyPath(tuple(parts))


def _next_part(text: str, position: int) -> tuple[KeyPart, int]:
    for pattern in (_QUOTED, _INDEX, _MATCH):
        found = pattern.match(text, position)
        if found is None:
            continue
        if pattern is _INDEX:
            return int(found.group(1)), found.end()
        if pattern is _MATCH:
            return ListMatch(found.group(1), found.group(2)), found.end()
        return found.group(1), found.end()
    found = _NAME.match(text, position)
    if found is None:
        shown = text[position:] or "the end"
        raise KeyPathError(f'"{text}": cannot read a key at "{shown}"')
    return found.group(0), found.end()


def _step(node: Any, part: KeyPart) -> tuple[bool, Any]:
    if isinstance(part, str):
        if isinstance(node, Mapping) and part in node:
            return True, node[part]
        return False, None
    if not isinstance(node, Sequence) or isinstance(node, str):
        return False, None
    if isinstance(part, int):
        return (True, node[part]) if 0 <= part < len(node) else (False, None)
    for item in node:
        if isinstance(item, Mapping) and str(item.get(part.field)) == part.value:
            return True, item
    return False, None


def resolve(data: Any, path: KeyPath) -> tuple[bool, Any]:
    """(found, value) of `path` in loaded data; (False, None) when any step is missing."""
    node = data
    for part in path.parts:
        found, node = _step(node, part)
        if not found:
            return False, None
    return True, node


def concrete_parts(data: Any, path: KeyPath) -> tuple[str | int, ...] | None:
    """`path` with each `[field=value]` replaced by the index it matches, or None if missing."""
    node = data
    out: list[str | int] = []
    for part in path.parts:
        if isinstance(part, ListMatch) and isinstance(node, Sequence):
            index = next(
                (
                    i
                    for i, item in enumerate(node)
                    if isinstance(item, Mapping) and str(item.get(part.field)) == part.value
                ),
                None,
            )
            if index is None:
                return None
            out.append(index)
            node = node[index]
            continue
        found, node = _step(node, part)
        if not found:
            return None
        out.append(part if isinstance(part, str | int) else 0)
    return tuple(out)


def as_text(parts: Sequence[KeyPart]) -> str:
    return str(KeyPath(tuple(parts)))
