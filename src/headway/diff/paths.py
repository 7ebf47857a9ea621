"""Concrete paths into JSON-like objects, and RFC 6901 JSON Pointers. Purely computational.

A path is a tuple of map keys (str) and list indexes (int). Operations never mutate their
input; they return modified copies.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ABSENT",
    "Path",
    "PointerError",
    "delete_paths",
    "get_path",
    "parse_pointer",
    "resolve_pointer",
    "set_path",
]

Path = tuple[str | int, ...]


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class PointerError(ValueError):
    """A string that is not an RFC 6901 JSON Pointer."""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """`/spec/template/metadata/annotations/a~1b` -> ("spec", ..., "a/b")."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError(f'"{pointer}" is not a JSON pointer (it must start with "/")')
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def resolve_pointer(obj: Any, tokens: tuple[str, ...]) -> Path | None:
    """The concrete path the pointer names in `obj`, or None when it names nothing."""
    path: list[str | int] = []
    node = obj
    for token in tokens:
        if isinstance(node, dict) and token in node:
            path.append(token)
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            path.append(int(token))
            node = node[int(token)]
        else:
            return None
    return tuple(path)


def get_path(obj: Any, path: Path) -> Any:
    node = obj
    for step in path:
        node = _child(node, step)
        if node is ABSENT:
            return ABSENT
    return node


def set_path(obj: Any, path: Path, value: Any) -> Any:
    """A copy of `obj` with `value` at `path`, creating missing maps on the way."""
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(obj)
    node = out
    for step, following in itertools.pairwise(path):
        child = _child(node, step)
        if child is ABSENT:
            child = [] if isinstance(following, int) else {}
            _assign(node, step, child)
        node = child
    _assign(node, path[-1], copy.deepcopy(value))
    return out


def _child(node: Any, step: str | int) -> Any:
    if isinstance(node, dict) and isinstance(step, str):
        return node.get(step, ABSENT)
    if isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
        return node[step]
    return ABSENT


def _assign(node: Any, step: str | int, value: Any) -> None:
    if isinstance(node, dict) and isinstance(step, str):
        node[step] = value
    elif isinstance(node, list) and isinstance(step, int):
        if step < len(node):
            node[step] = value
        else:
            node.append(value)


def delete_paths(obj: Any, paths: Iterable[Path]) -> Any:
    """A copy of `obj` without the values at `paths` (absent paths are ignored). List items
    are removed from the highest index down so earlier removals do not shift later ones."""
    out = copy.deepcopy(obj)
    for path in sorted(set(paths), key=_deletion_order, reverse=True):
        if not path:
            continue
        parent = get_path(out, path[:-1])
        last = path[-1]
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
        elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
            del parent[last]
    return out


def _deletion_order(path: Path) -> tuple[tuple[int, int, str], ...]:
    return tuple((1, s, "") if isinstance(s, int) else (0, 0, s) for s in path)
