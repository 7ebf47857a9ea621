"""The PATCH bodies the API accepts: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and
Kubernetes' strategic merge patch. Purely computational; a bad patch is `ApiError` 422/400.

Strategic merge patch follows Kubernetes' rules where the local store knows a list's merge
key (`listkeys`: containers, env, volumes by `name`, volumeMounts by `mountPath`, ports by
port, conditions by `type`, finalizers as a set): items merge by key, `null` deletes a key,
and the directives `$patch` (`replace`, `delete`, `merge`), `$retainKeys`,
`$deleteFromPrimitiveList/FIELD` and `$setElementOrder/FIELD` are honoured. Every other
list is replaced whole, as Kubernetes does for lists without a `patchStrategy`. What is
approximated: the key set comes from the field's name, not from the kind's Go types, so a
list that Kubernetes merges under a name the table lacks is replaced instead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from headway.cluster.local.api.kubeapi.status import ApiError
from headway.cluster.local.api.listkeys import list_keys

__all__ = ["json_patch", "merge_patch", "strategic_merge_patch"]

_EXTRA_MERGE_KEYS = {"conditions": ("type",), "hostAliases": ("ip",)}
_SET_LISTS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge, `null` removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy and test, applied in order."""
    if not isinstance(operations, list):
        raise ApiError(400, "BadRequest", "a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for index, op in enumerate(operations):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise ApiError(400, "BadRequest", f"JSON patch operation {index}: needs an \"op\"")
        doc = _json_patch_op(doc, op, index)
    return doc


def _json_patch_op(doc: Any, op: dict[str, Any], index: int) -> Any:
    name, path = op["op"], _pointer(op.get("path"), index)
    if name == "test":
        if _get(doc, path, index) != op.get("value"):
            raise ApiError(422, "Invalid", f"JSON patch operation {index}: test failed at "
                                           f"{op.get('path')}")
        return doc
    if name in ("move", "copy"):
        source = _pointer(op.get("from"), index)
        value = copy.deepcopy(_get(doc, source, index))
        if name == "move":
            doc = _remove(doc, source, index)
        return _add(doc, path, value, index)
    if name == "remove":
        return _remove(doc, path, index)
    if "value" not in op:
        raise ApiError(400, "BadRequest", f"JSON patch operation {index}: {name} needs a value")
    if name == "add":
        return _add(doc, path, copy.deepcopy(op["value"]), index)
    if name == "replace":
        _get(doc, path, index)
        return _add(_remove(doc, path, index), path, copy.deepcopy(op["value"]), index)
    raise ApiError(400, "BadRequest", f"JSON patch operation {index}: unknown op {name!r}")


def _pointer(raw: Any, index: int) -> list[str]:
    if not isinstance(raw, str) or (raw and not raw.startswith("/")):
        raise ApiError(400, "BadRequest", f"JSON patch operation {index}: bad path {raw!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in raw.split("/")[1:]]


def _missing(index: int, path: list[str]) -> ApiError:
    return ApiError(422, "Invalid", f"JSON patch operation {index}: path /{'/'.join(path)} "
                                    "does not exist")


def _step(node: Any, part: str, index: int, path: list[str]) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise _missing(index, path)


def _get(doc: Any, path: list[str], index: int) -> Any:
    node = doc
    for part in path:
        node = _step(node, part, index, path)
    return node


def _add(doc: Any, path: list[str], value: Any, index: int) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1], index)
    last = path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        position = len(parent) if last == "-" else int(last) if last.isdigit() else -1
        if not 0 <= position <= len(parent):
            raise _missing(index, path)
        parent.insert(position, value)
    else:
        raise _missing(index, path)
    return doc


def _remove(doc: Any, path: list[str], index: int) -> Any:
    if not path:
        return None
    parent = _get(doc, path[:-1], index)
    _step(parent, path[-1], index, path)
    if isinstance(parent, dict):
        del parent[path[-1]]
    else:
        del parent[int(path[-1])]
    return doc


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Kubernetes' strategic merge patch of `patch` onto `target` (see the module doc)."""
    if not isinstance(patch, dict):
        raise ApiError(400, "BadRequest", "a strategic merge patch must be a JSON object")
    merged = _merge_map(target if isinstance(target, dict) else {}, patch)
    return merged if merged is not _DELETED else {}


_DELETED: Any = object()


def _merge_map(target: Mapping[str, Any], patch: Mapping[str, Any]) -> Any:
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETED
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if not k.startswith("$")}
    result = copy.deepcopy(dict(target))
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain or k in patch}
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") and isinstance(value, list):
            orders[key.partition("/")[2]] = value
        elif key.startswith("$deleteFromPrimitiveList/") and isinstance(value, list):
            field = key.partition("/")[2]
            result[field] = [v for v in result.get(field) or [] if v not in value]
        elif key.startswith("$"):
            continue
        elif value is None:
            result.pop(key, None)
        else:
            merged = _merge_value(key, result.get(key), value)
            if merged is _DELETED:
                result.pop(key, None)
            else:
                result[key] = merged
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _ordered(field, result[field], order)
    return result


def _merge_value(field: str, live: Any, patch: Any) -> Any:
    if isinstance(patch, dict):
        return _merge_map(live if isinstance(live, dict) else {}, patch)
    if isinstance(patch, list):
        return _merge_list(field, live if isinstance(live, list) else [], patch)
    return copy.deepcopy(patch)


def _merge_keys(field: str, items: list[Any]) -> tuple[str, ...]:
    return _EXTRA_MERGE_KEYS.get(field) or list_keys(field, items)


def _merge_list(field: str, live: list[Any], patch: list[Any]) -> list[Any]:
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    if field in _SET_LISTS and all(not isinstance(i, dict | list) for i in patch):
        return list(live) + [i for i in patch if i not in live]
    keys = _merge_keys(field, [*live, *patch])
    if not keys or not all(isinstance(i, dict) for i in patch):
        return copy.deepcopy(patch)
    result = copy.deepcopy(live)
    for item in patch:
        at = _find(result, item, keys)
        if item.get("$patch") == "delete":
            if at is not None:
                del result[at]
        elif at is None:
            result.append({k: v for k, v in copy.deepcopy(item).items() if v is not None})
        else:
            result[at] = _merge_map(result[at], item)
    return result


def _find(items: list[Any], wanted: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    present = [k for k in keys if k in wanted]
    for n, item in enumerate(items):
        if isinstance(item, dict) and present and all(item.get(k) == wanted[k] for k in present):
            return n
    return None


def _ordered(field: str, items: list[Any], order: list[Any]) -> list[Any]:
    """`items` with those `order` names first, in its order; the rest after, as they were."""
    keys = _merge_keys(field, items)
    placed: list[Any] = []
    for wanted in order:
        if isinstance(wanted, dict):
            at = _find(items, wanted, keys)
            found = items[at] if at is not None else None
        else:
            found = wanted if wanted in items else None
        if found is not None and all(found is not p for p in placed):
            placed.append(found)
    return placed + [i for i in items if all(i is not p for p in placed)]
