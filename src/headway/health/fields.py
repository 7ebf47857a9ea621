"""Tolerant readers for raw Kubernetes objects (plain JSON-like dicts).

Live objects come from many API versions and controllers; a missing or mistyped field reads
as the default instead of raising, the way Go's typed conversion zero-fills.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["annotations_of", "conditions", "find_condition", "get", "get_int", "get_str"]



def get(obj: Any, *path: str) -> Any:
    """The value at `path`, or None when any step is missing or not a mapping."""
    node = obj
    for key in path:
        # `type` first: an ABC `isinstance` per step was a tenth of assessing a fleet's health.
        if type(node) is not dict and not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def get_int(obj: Any, *path: str, default: int = 0) -> int:
    value = get(obj, *path)
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default


def get_str(obj: Any, *path: str, default: str = "") -> str:
    value = get(obj, *path)
    return value if isinstance(value, str) else default


def annotations_of(obj: Any) -> dict[str, str]:
    raw = get(obj, "metadata", "annotations")
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items() if v is not None}


def conditions(obj: Any) -> list[Mapping[str, Any]]:
    raw = get(obj, "status", "conditions")
    if not isinstance(raw, list):
        return []
    return [c for c in raw if isinstance(c, Mapping)]


def find_condition(obj: Any, condition_type: str) -> Mapping[str, Any] | None:
    for condition in conditions(obj):
        if condition.get("type") == condition_type:
            return condition
    return None
