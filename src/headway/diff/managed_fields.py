"""Field ownership from `metadata.managedFields`, for `managedFieldsManagers` ignore rules.

`fieldsV1` is a trie of elements: `f:<key>` (map key), `k:<json>` (associative-list item by
its key fields), `v:<json>` (set member), `i:<n>` (list index) and `.` (the item itself).
Headway's local store writes the same shape. Decoding gives `{element path: managers}`;
resolving an element path against a concrete object gives the concrete path to drop.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from headway.diff.paths import Path

__all__ = ["ElementPath", "decode_owners", "owned_paths", "resolve_element_path"]

ElementPath = tuple[str, ...]


def decode_owners(managed_fields: Any) -> dict[ElementPath, frozenset[str]]:
    """`{element path: managers owning it}` from a raw `metadata.managedFields` list;
    malformed entries are skipped."""
    owners: dict[ElementPath, set[str]] = {}
    if not isinstance(managed_fields, list):
        return {}
    for entry in managed_fields:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("fieldsV1"), Mapping):
            continue
        manager = str(entry.get("manager", ""))
        for path in _leaves(entry["fieldsV1"], ()):
            owners.setdefault(path, set()).add(manager)
    return {path: frozenset(managers) for path, managers in owners.items()}


def _leaves(node: Mapping[str, Any], prefix: ElementPath) -> Iterable[ElementPath]:
    for element, child in node.items():
        path = (*prefix, element)
        if isinstance(child, Mapping) and child:
            yield from _leaves(child, path)
        else:
            yield path


def owned_paths(
    owners: Mapping[ElementPath, str | Collection[str]], managers: Collection[str]
) -> set[ElementPath]:
    """Element paths owned by any of `managers` (an owner may be one name or several)."""
    wanted = set(managers)
    out = set()
    for path, owner in owners.items():
        names = {owner} if isinstance(owner, str) else set(owner)
        if names & wanted:
            out.add(path)
    return out


def resolve_element_path(obj: Any, path: ElementPath) -> Path | None:
    """The concrete path an element path names in `obj`, or None when it names nothing."""
    concrete: list[str | int] = []
    node = obj
    for element in path:
        if element == ".":
            break
        step = _step(node, element)
        if step is None:
            return None
        concrete.append(step)
        node = node[step]
    return tuple(concrete)


def _step(node: Any, element: str) -> str | int | None:
    prefix, body = element[:2], element[2:]
    if prefix == "f:" and isinstance(node, Mapping):
        return body if body in node else None
    if not isinstance(node, list):
        return None
    if prefix == "i:" and body.isdigit():
        return int(body) if int(body) < len(node) else None
    try:
        wanted = json.loads(body)
    except ValueError:
        return None
    for index, item in enumerate(node):
        if prefix == "k:" and _has_fields(item, wanted):
            return index
        if prefix == "v:" and item == wanted:
            return index
    return None


def _has_fields(item: Any, wanted: Any) -> bool:
    if not isinstance(item, Mapping) or not isinstance(wanted, Mapping):
        return False
    return all(str(item.get(k)) == str(v) for k, v in wanted.items())
