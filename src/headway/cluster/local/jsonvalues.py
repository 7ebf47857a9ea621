"""Copying JSON-shaped values (dicts, lists, scalars) fast. Purely computational."""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["clone"]

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
