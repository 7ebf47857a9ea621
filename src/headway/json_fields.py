"""Typed reads of one field of a JSON answer from a forge's REST API (GitHub, GitLab, Gitea).

Each raises `KeyError` for a missing key and `ValueError` naming the key for a value of the
wrong type, so a caller turns a malformed answer into one error that says which field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["integer_field", "text_field"]


def text_field(raw: Mapping[str, Any], key: str) -> str:
    """A string field; ValueError naming the key when it is not one."""
    value = raw[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} is not a string")
    return value


def integer_field(raw: Mapping[str, Any], key: str) -> int:
    """An integer field (a JSON boolean is not one)."""
    value = raw[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{key} is not an integer")
    return value
