"""Server-side apply: field ownership per manager. Purely computational, no side effects.

A field is named by a path of elements in the spirit of Kubernetes' `fieldsV1`:
`f:<key>` for a map key, `k:<json of the key fields>` for an item of an associative list,
`.` for the item itself (its existence), and `v:<json>` for a member of a set-like list.
Each manager (per operation, `Apply` or `Update`) owns a set of paths: leaves, and maps,
lists or items it owns as such (ending in `.` when they hold fields).

* `apply_fields` merges a manager's applied configuration into the live content, raises
  `FieldConflict` where another manager owns a field whose value would change (unless
  `force`, which moves ownership), removes fields the manager applied before and omits
  now (unless another manager owns them), and records the manager's new set.
* `update_fields` gives a non-apply writer the fields it added or changed, taking them from
  others.

These follow Kubernetes' structured-merge-diff library step for step, and are checked
against it (tests/cluster/ssa_oracle/, docs/kubernetes.md).

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
    node_paths,
    render_path,
    value_at,
)
from headway.cluster.local.api.jsonvalues import clone
from headway.cluster.local.api.listkeys import (
    is_atomic_map,
    item_key,
    key_matches,
    list_keys,
    list_semantics,
)

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
    live_index, merged_index = node_paths(live), node_paths(merged)
    conflicts = _conflicts(live, merged, entries, manager,
                           live_index=live_index, merged_index=merged_index)
    if conflicts and not force:
        raise _refusal(manager, conflicts)
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
        owned = [p for e in [*others, mine_now] for p in e.fields]
        pruned = _pruned(merged, previous.fields, owned)
        merged, merged_index = pruned, merged_index if pruned is merged else node_paths(pruned)
    kept = [e for e in entries if e is not previous]
    # The applier owns what it applied even where pruning took it away (an applied `{}`
    # whose unowned contents went): structured-merge-diff never drops the applier's set.
    mine = (mine_now,) if mine_now.fields else ()
    normalized = _normalized(kept, live, merged, indexes=(live_index, merged_index))
    return ApplyOutcome(merged, (*normalized, *mine))


def _refusal(manager: str, conflicts: list[tuple[FieldPath, str]]) -> FieldConflict:
    listed = "; ".join(f"{render_path(p)} (owned by {m})" for p, m in conflicts)
    return FieldConflict(
        f"apply by {manager!r} conflicts with other managers: {listed}; "
        "apply with force to take ownership",
        [(render_path(p), m) for p, m in conflicts],
    )


def update_fields(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    managed: Iterable[ManagedEntry],
    *,
    manager: str,
    api_version: str,
    now: str,
) -> tuple[ManagedEntry, ...]:
    """Ownership after `manager` replaced `old` with `new` by an ordinary write.

    As structured-merge-diff records an update: the writer takes every field it added
    (maps, lists and items included, not only their leaves) or changed, from whoever
    owned it; a field that is gone is no one's.
    """
    before, after = node_paths(old), node_paths(new)
    changed = (after.keys() - before.keys()) | {
        p for p in before.keys() & after.keys() if _value_changed(before[p], after[p], p)}
    entries = [
        replace(e, fields=_stored(_members(e.fields) - changed, after)) for e in managed
    ]
    previous = next(
        (e for e in entries if e.manager == manager and e.operation == "Update"), None
    )
    mine = changed | _members(previous.fields if previous else frozenset())
    mine -= {_METADATA}  # identity's parent: the API server never records it as owned
    entry = ManagedEntry(manager, "Update", api_version, now, _stored(mine, after))
    kept = [e for e in entries if e is not previous]
    return _normalized([*kept, entry], old, new)


_METADATA: FieldPath = ("f:metadata",)
Index = dict[FieldPath, Any]  # values by member path (node_paths)


def _value_changed(before: Any, after: Any, path: FieldPath) -> bool:
    """Whether a value present before and after changed as one value (a scalar, an
    atomic list or map); a map or keyed list changes only through what it holds."""
    field = path[-1][2:] if path[-1].startswith("f:") else ""
    if isinstance(after, dict) and isinstance(before, dict) and not is_atomic_map(field):
        return False
    if isinstance(after, list) and isinstance(before, list) and field and (
            list_semantics(field, [*before, *after]) != "atomic"):
        return False
    return bool(before != after)


def _members(paths: Iterable[FieldPath]) -> frozenset[FieldPath]:
    return frozenset(p[:-1] if p and p[-1] == "." else p for p in paths)


def _looked_up(index: Index, content: Mapping[str, Any], path: FieldPath) -> Any:
    """The value at `path` (member or with `.`), from the index when it has it (a path
    owned into an atomic value by an older store, or owned while absent, is looked for)."""
    member = path[:-1] if path and path[-1] == "." else path
    found = index.get(member, MISSING)
    return found if found is not MISSING else value_at(content, member)


def _stored(members: Iterable[FieldPath], index: Index) -> frozenset[FieldPath]:
    """Member paths as the store keeps them: `.` after an item, or after a map or list
    that holds something (the node itself, not its contents)."""
    out = set()
    for path in members:
        out.add((*path, ".") if _holds_fields(index.get(path, MISSING), path) else path)
    return frozenset(out)


def _holds_fields(value: Any, path: FieldPath) -> bool:
    """Whether `path` is an item, or a map or list owned field by field that holds some."""
    if path[-1].startswith("k:"):
        return True
    field = path[-1][2:]
    if isinstance(value, dict):
        return bool(value) and not is_atomic_map(field)
    return isinstance(value, list) and list_semantics(field, value) != "atomic" and bool(value)


def _conflicts(
    live: Mapping[str, Any],
    merged: Mapping[str, Any],
    entries: list[ManagedEntry],
    manager: str,
    *,
    live_index: Index,
    merged_index: Index,
) -> list[tuple[FieldPath, str]]:
    before, after = live_index, merged_index
    found: set[tuple[FieldPath, str]] = set()
    for entry in entries:
        if entry.manager == manager and entry.operation == "Apply":
            continue  # its own updates are another owner, as on Kubernetes
        for path in entry.fields:
            old, new = _looked_up(before, live, path), _looked_up(after, merged, path)
            if _differs(old, new, path):
                found.add((path, entry.manager))
    return sorted(found, key=lambda c: (render_path(c[0]), c[1]))


def _differs(old: Any, new: Any, path: FieldPath) -> bool:
    if path and path[-1] == ".":  # the node's existence, not its contents
        return (old is MISSING) != (new is MISSING)
    if old is MISSING or new is MISSING:
        return old is not new
    return _value_changed(old, new, path)


def _normalized(
    entries: list[ManagedEntry],
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    indexes: tuple[Index, Index] | None = None,
) -> tuple[ManagedEntry, ...]:
    """Drop the paths this write removed, and entries left owning nothing.

    Only a removal ends ownership, as in structured-merge-diff: a path owned while absent
    (an applied `{}` whose unowned contents were pruned) stays owned until someone writes
    it. A path that was a leaf and is now a parent (an applied `{}` that others filled)
    stays owned: it names the map's existence.
    """
    old, new = indexes or (node_paths(before), node_paths(after))

    def removed(path: FieldPath) -> bool:
        was = _looked_up(old, before, path) is not MISSING
        return was and _looked_up(new, after, path) is MISSING

    out = [replace(e, fields=frozenset(p for p in e.fields if not removed(p))) for e in entries]
    return tuple(e for e in out if e.fields)


def merge(live: Any, applied: Any, field: str = "") -> Any:
    """`applied` laid over `live`: maps merge by key, associative lists by item key,
    set-like lists by value; anything else is replaced."""
    if isinstance(live, dict) and isinstance(applied, Mapping) and not is_atomic_map(field):
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


def _pruned(
    merged: dict[str, Any], last: frozenset[FieldPath], owned: Iterable[FieldPath]
) -> dict[str, Any]:
    """`merged` without what the applier applied last time (`last`) and omits now, unless
    a manager (the applier now included) owns it or something under it.

    Structured-merge-diff's pruning, step by step, on member paths (an item's `.` is the
    item): remove everything `last` names, and every field above it; add back what anyone
    owns; then take from `merged` only what that removed and `last` named. So a field the
    applier held something under goes with all it holds once no one owns anything there,
    including what no one owns (an empty keyed list, which names no field).
    """
    last_named = _with_named_parents(last)
    owned_named = _with_named_parents([*owned, _NAME])
    merged_named = _fields_of(merged)
    if merged_named <= owned_named:
        return merged  # everything is someone's: the steps below would add all of it back
    pruned = _without(merged, last_named, emptied_as_null=True)
    pruned = _without(merged, merged_named - (_fields_of(pruned) | owned_named),
                      emptied_as_null=True)
    dangling = (merged_named - _fields_of(pruned)) & last_named
    return _without(merged, dangling)


# Every object has a name, and every applied configuration names it: in the library's
# view `metadata` is always held (the API server strips the name from what it records).
_NAME: FieldPath = ("f:metadata", "f:name")


def _fields_of(content: Mapping[str, Any]) -> frozenset[FieldPath]:
    return _with_named_parents([*field_set(content), _NAME])


def _with_named_parents(paths: Iterable[FieldPath]) -> frozenset[FieldPath]:
    """Member paths (no trailing `.`), each with every field above it (`f:` elements)."""
    out: set[FieldPath] = set()
    for path in paths:
        member = path[:-1] if path and path[-1] == "." else path
        if member in out:
            continue
        out.add(member)
        for n in range(len(member) - 1, 0, -1):  # innermost first: stop at a known one,
            if member[n - 1][0] == "f":  # an `f:` element: a named field
                prefix = member[:n]
                if prefix in out:  # whose own parents are in already
                    break
                out.add(prefix)
    return frozenset(out)


def _without(
    content: dict[str, Any], members: frozenset[FieldPath], *, emptied_as_null: bool = False
) -> dict[str, Any]:
    """`content` without `members`. With `emptied_as_null`, a list this empties becomes
    null, as in the library's values, where a null is a field of its own (an empty list
    is none): the pruning steps compare field sets of such intermediate results."""
    out = clone(content)
    emptied = set()
    for path in sorted(members, key=len):  # outermost first: their contents go with them
        if _is_key_field(path):
            continue
        if path[-1][:2] in ("k:", "v:") and value_at(out, path) is not MISSING:
            emptied.add(path[:-1])
        _remove(out, path)
    for path in emptied if emptied_as_null else ():
        holder = value_at(out, path[:-1])
        if value_at(out, path) == [] and isinstance(holder, dict):
            holder[path[-1][2:]] = None
    return out


def _is_key_field(path: FieldPath) -> bool:
    """Whether `path` names one of the key fields of a keyed list's item."""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


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


def encode_managed_fields(entries: Iterable[ManagedEntry]) -> list[dict[str, Any]]:
    """The `metadata.managedFields` list, with `fieldsV1` as a nested trie of elements."""
    out = []
    for entry in entries:
        trie: dict[str, Any] = {}
        # A field owned itself and through what it holds is written with a `.`, as
        # Kubernetes does: otherwise its own membership would be lost in the trie.
        parents = {p[:n] for p in entry.fields for n in range(1, len(p))}
        for path in sorted(entry.fields):
            written = (*path, ".") if path in parents and path[-1] != "." else path
            node = trie
            for element in written:
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
