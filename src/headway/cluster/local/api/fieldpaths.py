"""Field paths: the names of the fields server-side apply tracks. Purely computational.

A path is a tuple of elements like Kubernetes' `fieldsV1` keys: `f:<key>` (map key),
`k:<json>` (associative list item by key), `.` (that item's existence), `v:<json>`
(set-like list member). A path ending at a scalar, an atomic list or an empty map is a leaf.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from headway.cluster.local.api.listkeys import (
    is_atomic_map,
    item_key,
    key_matches,
    list_keys,
    list_semantics,
    missing_keys,
)

__all__ = [
    "MISSING", "FieldPath", "field_set", "keyless_items", "node_paths", "render_path", "value_at",
]

FieldPath = tuple[str, ...]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def field_set(content: Mapping[str, Any]) -> frozenset[FieldPath]:
    """Every leaf path of `content` (the fields an applier of `content` would own)."""
    out: set[FieldPath] = set()
    for key, value in content.items():
        _walk(value, (f"f:{key}",), key, out)
    return frozenset(out)


def _walk(value: Any, prefix: FieldPath, field: str, out: set[FieldPath]) -> None:
    if isinstance(value, Mapping) and value and not is_atomic_map(field):
        for key, child in value.items():
            _walk(child, (*prefix, f"f:{key}"), key, out)
    elif isinstance(value, list):
        semantics = list_semantics(field, value)
        if semantics != "atomic" and not value:
            return  # an empty keyed list or set names no field (structured-merge-diff)
        if semantics == "set":
            out.update((*prefix, "v:" + _dumps(v)) for v in value)
        elif semantics == "map":
            keys = list_keys(field, value)
            for item in value:
                item_path = (*prefix, "k:" + item_key(item, keys))
                out.add((*item_path, "."))
                for key, child in item.items():  # key fields too, as Kubernetes owns them
                    _walk(child, (*item_path, f"f:{key}"), key, out)
        else:
            out.add(prefix)
    else:
        out.add(prefix)


def node_paths(content: Mapping[str, Any]) -> dict[FieldPath, Any]:
    """Every value in `content` by its path, maps, lists and items included (an item's
    path ends at its key, without `.`); the inside of an atomic value has no paths. What
    an update is compared by, and an index that spares walking lists for each path."""
    out: dict[FieldPath, Any] = {}
    for key, value in content.items():
        _nodes(value, (f"f:{key}",), key, out)
    return out


def _nodes(value: Any, path: FieldPath, field: str, out: dict[FieldPath, Any]) -> None:
    out[path] = value
    if isinstance(value, Mapping) and not is_atomic_map(field):
        for key, child in value.items():
            _nodes(child, (*path, f"f:{key}"), key, out)
    elif isinstance(value, list):
        semantics = list_semantics(field, value)
        if semantics == "set":
            out.update(((*path, "v:" + _dumps(v)), v) for v in value)
        elif semantics == "map":
            keys = list_keys(field, value)
            for item in value:
                item_path = (*path, "k:" + item_key(item, keys))
                out[item_path] = item
                for key, child in item.items():
                    _nodes(child, (*item_path, f"f:{key}"), key, out)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def value_at(obj: Any, path: FieldPath) -> Any:
    """The value `path` names in `obj`, or `MISSING`."""
    current = obj
    for element in path:
        kind, body = element[:2], element[2:]
        if element == ".":
            continue
        if kind == "f:" and isinstance(current, Mapping) and body in current:
            current = current[body]
        elif kind == "k:" and isinstance(current, list):
            found = [i for i in current if key_matches(i, body)]
            if not found:
                return MISSING
            current = found[0]
        elif kind == "v:" and isinstance(current, list) and json.loads(body) in current:
            current = json.loads(body)
        else:
            return MISSING
    return current


def render_path(path: FieldPath) -> str:
    """A readable path: `.spec.template.spec.containers[name="web"].image`."""
    parts = []
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:":
            parts.append(f".{body}")
        elif kind == "k:":
            key = json.loads(body)
            parts.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in key.items()) + "]")
        elif kind == "v:":
            parts.append(f"[{body}]")
    return "".join(parts) or "."


def keyless_items(content: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Paths of associative-list items that lack their key fields (invalid for apply)."""
    found: list[str] = []
    for key, value in content.items():
        where = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            found.extend(keyless_items(value, where))
        elif isinstance(value, list):
            found.extend(f"{where}[{n}]" for n in missing_keys(key, value))
            for n, item in enumerate(value):
                if isinstance(item, Mapping):
                    found.extend(keyless_items(item, f"{where}[{n}]"))
    return found
