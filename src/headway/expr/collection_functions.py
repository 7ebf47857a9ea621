"""Array and map builtins (`keys`, `take`, `concat`, `flatten`, `uniq`, `get`...), as expr-lang.

Headway differs in one visible way: `keys` and `values` list a map in its insertion order (the
JSON document's order), where Go's map order is random from one run to the next.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.signature import Builtin, need_int, need_list, need_map
from headway.expr.values import (
    describe_value,
    is_list,
    is_map,
    is_number,
    to_index,
    type_name,
)

__all__ = ["COLLECTION_FUNCTIONS", "MAX_NESTING"]

MAX_NESTING = 100
"""How deeply `flatten` descends before it gives up, as expr-lang's MaxDepth."""


def _take(args: list[Any]) -> list[Any]:
    items, count = need_list("take", args[0]), need_int("take", args[1])
    if count < 0:
        raise EvalProblem(f"take: cannot take {count} elements")
    return list(items[:count])


def _get(args: list[Any]) -> Any:
    """`container[key]`, but nil where indexing would be an error (missing key, bad index)."""
    container, key = args
    if is_map(container):
        try:
            return container.get(key)
        except TypeError:  # an unhashable key (an array or a map) is never present
            return None
    if (is_list(container) or isinstance(container, str)) and not isinstance(key, str | bool):
        try:
            index = to_index(key, "an index")
        except EvalProblem:
            return None
        position = index + len(container) if index < 0 else index
        return container[position] if 0 <= position < len(container) else None
    if container is None or is_list(container) or isinstance(container, str):
        return None
    raise EvalProblem(f"type {type_name(container)} does not support indexing")


def _concat(args: list[Any]) -> list[Any]:
    return [item for arg in args for item in need_list("concat", arg)]


def _flatten(items: Any, depth: int = 0) -> list[Any]:
    if depth > MAX_NESTING:
        raise EvalProblem(f"flatten: arrays nest deeper than {MAX_NESTING} levels")
    flat: list[Any] = []
    for item in items:
        if is_list(item):
            flat.extend(_flatten(item, depth + 1))
        else:
            flat.append(item)
    return flat


def _canonical(item: Any) -> Hashable:
    """A hashable stand-in, equal exactly when `values_equal` is: `1 == 1.0`, `true != 1`,
    arrays element by element, maps key by key; a NaN equals nothing, not even itself."""
    if isinstance(item, float) and math.isnan(item):
        return ("nan", id(item))
    if item is None or isinstance(item, bool | str):
        return (type(item).__name__, item)
    if isinstance(item, int | float):
        return ("number", item)
    if is_list(item):
        return ("array", tuple(_canonical(element) for element in item))
    if is_map(item):
        return ("map", frozenset((key, _canonical(value)) for key, value in item.items()))
    return ("other", id(item))


def _uniq(args: list[Any]) -> list[Any]:
    kept: list[Any] = []
    seen: set[Hashable] = set()
    for item in need_list("uniq", args[0]):
        key = _canonical(item)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _from_pairs(args: list[Any]) -> dict[Any, Any]:
    pairs: dict[Any, Any] = {}
    for pair in need_list("fromPairs", args[0]):
        if not is_list(pair) or len(pair) != 2:
            raise EvalProblem(f"fromPairs: invalid pair {describe_value(pair)}")
        key, value = pair
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise EvalProblem(f"fromPairs: a key cannot be {type_name(key)}")
        pairs[key] = value
    return pairs


def _sort(args: list[Any]) -> list[Any]:
    """`sort(array[, "asc"|"desc"])`: numbers with numbers, or strings with strings."""
    items = list(need_list("sort", args[0]))
    order = args[1] if len(args) == 2 else "asc"
    if order not in ("asc", "desc"):
        raise EvalProblem(f'sort: unknown order {describe_value(order)} (use "asc" or "desc")')
    numbers = all(is_number(item) for item in items)
    if not numbers and not all(isinstance(item, str) for item in items):
        raise EvalProblem("sort needs an array of numbers or an array of strings")
    return sorted(items, reverse=order == "desc")


COLLECTION_FUNCTIONS = (
    Builtin("keys", 1, 1, lambda args: list(need_map("keys", args[0]).keys())),
    Builtin("values", 1, 1, lambda args: list(need_map("values", args[0]).values())),
    Builtin("get", 2, 2, _get),
    Builtin("take", 2, 2, _take),
    Builtin("concat", 1, 1 << 16, _concat),
    Builtin("flatten", 1, 1, lambda args: _flatten(need_list("flatten", args[0]))),
    Builtin("uniq", 1, 1, _uniq),
    Builtin("reverse", 1, 1, lambda args: list(reversed(need_list("reverse", args[0])))),
    Builtin("sort", 1, 2, _sort),
    Builtin("toPairs", 1, 1, lambda args: [list(p) for p in need_map("toPairs", args[0]).items()]),
    Builtin("fromPairs", 1, 1, _from_pairs),
)
