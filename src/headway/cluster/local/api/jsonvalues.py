"""Copying JSON-shaped values (dicts, lists, scalars) fast, and finding what is not JSON.
Purely computational."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from headway.model.schema import describe
from headway.model.yamlload import format_path

__all__ = ["clone", "not_json"]

_SCALARS = (str, int, float, bool, type(None))

T = TypeVar("T")


def clone(value: T) -> T:
    """A deep copy of a JSON-shaped value; several times faster than `copy.deepcopy`."""
    return _clone(value)  # type: ignore[no-any-return]


def _clone(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def not_json(value: Any) -> str:
    """Why `value` cannot be stored as JSON ("" when it can): the first field holding a
    value JSON has no form for (a YAML date, a set...), named by its path."""
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        pass
    else:
        return ""  # the common case, checked at C speed
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((*path, str(k)), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
        elif not isinstance(item, _SCALARS):
            hint = " (quote it)" if hasattr(item, "isoformat") else ""
            where = format_path(path) or "the object"
            return f"{where}: {describe(item)} is not a JSON value{hint}"
    return "the object is nested too deeply or refers to itself"
