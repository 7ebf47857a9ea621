"""Server-side apply: field ownership per manager. Purely computational, no side effects.

A field is named by a path of elements in the spirit of Kubernetes' `fieldsV1`:
`f:<key>` for a map key, `k:<json of the key fields>` for an item of an associative list,
`.` for the item itself (its existence), and `v:<json>` for a member of a set-like list.
Each manager (per operation, `Apply` or `Update`) owns a set of leaf paths.

* `apply_fields` merges a manager's applied configuration into the live content, raises
  `FieldConflict` where another manager owns a field whose value would change (unless
  `force`, which moves ownership), removes fields the manager applied before and omits
  now (unless another manager owns them), and records the manager's new set.
* `update_fields` gives a non-apply writer the fields it changed, taking them from others.

"Content" here is everything SSA manages: the object without `apiVersion`, `kind`,
`status` and server-set metadata (see `managed_content` in `objects.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from headway.cluster.errors import FieldConflict, Invalid
from headway.cluster.local.api.fieldpaths import (
    MISSING,
    FieldPath,
    field_set,
    keyless_items,
    render_path,
    value_at,
)
from headway.cluster.local.api.jsonvalues import clone
from headway.cluster.local.api.listkeys import item_key, key_matches, list_keys, list_semantics

__all__ = [
    "ApplyOutcome",
    "ManagedEntry",
    "apply_fields",
    "check_applied_lists",
    "decode_managed_fields",
    "encode_managed_fields",
    "update_fields",
]


@dataclass(frozen=True)
class ManagedEntry:
    """What one manager owns through one kind of operation."""

    manager: str
    operation: str  # "Apply" or "Update"
    api_version: str
    time: str
    fields: frozenset[FieldPath]


@dataclass(frozen=True)
class ApplyOutcome:
    content: dict[str, Any]
    managed: tuple[ManagedEntry, ...]


def apply_fields(
    live: Mapping[str, Any],
    managed: Iterable[ManagedEntry],
    applied: Mapping[str, Any],
    *,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
) -> ApplyOutcome:
    """The content and ownership after `manager` applies `applied` over `live`."""
    entries = list(managed)
    applied_paths = field_set(applied)
    merged = merge(clone(live), applied)  # a copy: removals below edit it in place
    conflicts = _conflicts(live, merged, entries, manager)
    if conflicts and not force:
        listed = "; ".join(f"{render_path(p)} (owned by {m})" for p, m in conflicts)
        raise FieldConflict(
            f"apply by {manager!r} conflicts with other managers: {listed}; "
            "apply with force to take ownership",
            [(render_path(p), m) for p, m in conflicts],
        )
    lost = {(m, p) for p, m in conflicts}
    entries = [
        replace(e, fields=frozenset(p for p in e.fields if (e.manager, p) not in lost))
        for e in entries
    ]
    previous = next(
        (e for e in entries if e.manager == manager and e.operation == "Apply"), None
    )
    others = [e for e in entries if not (e.manager == manager and e.operation == "Apply")]
    # What this manager applies now is kept too: an omitted `{}` may have become a parent.
    mine_now = ManagedEntry(manager, "Apply", api_version, now, applied_paths)
    if previous is not None:
        _remove_omitted(merged, previous.fields - applied_paths, [*others, mine_now])
    kept = [e for e in entries if e is not previous]
    return ApplyOutcome(merged, _normalized([*kept, mine_now], merged))


def update_fields(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    managed: Iterable[ManagedEntry],
    *,
    manager: str,
    api_version: str,
    now: str,
) -> tuple[ManagedEntry, ...]:
    """Ownership after `manager` replaced `old` with `new` by an ordinary write."""
    entries = list(managed)
    changed = frozenset(p for p in field_set(new) if _differs(old, new, p))
    if not changed:
        return _normalized(entries, new)
    entries = [replace(e, fields=e.fields - changed) for e in entries]
    previous = next(
        (e for e in entries if e.manager == manager and e.operation == "Update"), None
    )
    fields = changed | (previous.fields if previous else frozenset())
    mine = ManagedEntry(manager, "Update", api_version, now, fields)
    kept = [e for e in entries if e is not previous]
    return _normalized([*kept, mine], new)


def _conflicts(
    live: Mapping[str, Any],
    merged: Mapping[str, Any],
    entries: list[ManagedEntry],
    manager: str,
) -> list[tuple[FieldPath, str]]:
    found: set[tuple[FieldPath, str]] = set()
    for entry in entries:
        if entry.manager == manager:
            continue
        for path in entry.fields:
            if _differs(live, merged, path):
                found.add((path, entry.manager))
    return sorted(found, key=lambda c: (render_path(c[0]), c[1]))


def _differs(before: Mapping[str, Any], after: Mapping[str, Any], path: FieldPath) -> bool:
    old, new = value_at(before, path), value_at(after, path)
    if path and path[-1] == ".":  # the item's existence, not its contents
        return (old is MISSING) != (new is MISSING)
    if isinstance(old, dict) and isinstance(new, dict):  # owning a map is owning its existence
        return False
    return bool(old != new)


def _normalized(
    entries: list[ManagedEntry], content: Mapping[str, Any]
) -> tuple[ManagedEntry, ...]:
    """Drop paths that no longer exist and entries that own nothing.

    A path that was a leaf and is now a parent (an applied `{}` that others filled) stays
    owned: it names the map's existence.
    """
    leaves = field_set(content)

    def exists(path: FieldPath) -> bool:
        return path in leaves or value_at(content, path) is not MISSING

    out = [replace(e, fields=frozenset(p for p in e.fields if exists(p))) for e in entries]
    return tuple(e for e in out if e.fields)


def merge(live: Any, applied: Any, field: str = "") -> Any:
    """`applied` laid over `live`: maps merge by key, associative lists by item key,
    set-like lists by value; anything else is replaced."""
    if isinstance(live, dict) and isinstance(applied, Mapping):
        out = dict(live)
        for key, value in applied.items():
            out[key] = merge(live[key], value, key) if key in live else clone(value)
        return out
    if isinstance(live, list) and isinstance(applied, list):
        semantics = list_semantics(field, [*live, *applied])
        if semantics == "set":
            return [*live, *(clone(v) for v in applied if v not in live)]
        if semantics == "map":
            return _merge_keyed(live, applied, list_keys(field, [*live, *applied]))
    return clone(applied)


def _merge_keyed(live: list[Any], applied: list[Any], keys: tuple[str, ...]) -> list[Any]:
    applied_by_key = {item_key(item, keys): item for item in applied}
    out: list[Any] = []
    for item in live:
        key = item_key(item, keys)
        out.append(merge(item, applied_by_key.pop(key)) if key in applied_by_key else item)
    out.extend(clone(item) for item in applied_by_key.values())
    return out


def _remove_omitted(
    content: dict[str, Any], omitted: Iterable[FieldPath], others: list[ManagedEntry]
) -> None:
    owned_elsewhere = [p for e in others for p in e.fields]
    for path in sorted(omitted, key=len, reverse=True):
        base = path[:-1] if path[-1] == "." else path
        if any(q[: len(base)] == base for q in owned_elsewhere):
            continue
        _remove(content, base)
        _prune_empty_parents(content, base, owned_elsewhere)


def _remove(content: dict[str, Any], path: FieldPath) -> None:
    parent = value_at(content, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and last.startswith("f:"):
        parent.pop(last[2:], None)
    elif isinstance(parent, list) and last.startswith("v:"):
        value = json.loads(last[2:])
        if value in parent:
            parent.remove(value)
    elif isinstance(parent, list) and last.startswith("k:"):
        parent[:] = [i for i in parent if not key_matches(i, last[2:])]


def _prune_empty_parents(
    content: dict[str, Any], path: FieldPath, owned_elsewhere: list[FieldPath]
) -> None:
    """Remove maps left empty by a removal, unless someone owns them as they are."""
    for depth in range(len(path) - 1, 0, -1):
        prefix = path[:depth]
        if not prefix[-1].startswith("f:") or prefix in owned_elsewhere:
            return
        value = value_at(content, prefix)
        if value not in ({}, []):
            return
        _remove(content, prefix)


def encode_managed_fields(entries: Iterable[ManagedEntry]) -> list[dict[str, Any]]:
    """The `metadata.managedFields` list, with `fieldsV1` as a nested trie of elements."""
    out = []
    for entry in entries:
        trie: dict[str, Any] = {}
        for path in sorted(entry.fields):
            node = trie
            for element in path:
                node = node.setdefault(element, {})
        out.append({
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
            "time": entry.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": trie,
        })
    return out


def decode_managed_fields(raw: Any) -> tuple[ManagedEntry, ...]:
    """Entries from a stored `metadata.managedFields` list (malformed entries are skipped)."""
    if not isinstance(raw, list):
        return ()
    entries = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("fieldsV1"), dict):
            continue
        paths = frozenset(_trie_paths(item["fieldsV1"], ()))
        entries.append(ManagedEntry(
            manager=str(item.get("manager", "")),
            operation=str(item.get("operation", "Update")),
            api_version=str(item.get("apiVersion", "")),
            time=str(item.get("time", "")),
            fields=paths,
        ))
    return tuple(entries)


def _trie_paths(node: dict[str, Any], prefix: FieldPath) -> Iterable[FieldPath]:
    for element, child in node.items():
        path = (*prefix, element)
        if isinstance(child, dict) and child:
            yield from _trie_paths(child, path)
        else:
            yield path


def check_applied_lists(applied: Mapping[str, Any]) -> None:
    """Raise `Invalid` when an associative list item lacks its key fields."""
    keyless = keyless_items(applied)
    if keyless:
        raise Invalid(f"{keyless[0]}: an item of this list needs its key field(s) to be applied")
