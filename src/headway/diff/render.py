"""Readable diffs: YAML of both sides through difflib, Secret values masked."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import yaml

__all__ = ["mask_secret_values", "unified_diff", "yaml_diff_lines"]

# libyaml's emitter is several times faster than the pure-Python one.
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(obj: Mapping[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    text = yaml.dump(dict(obj), Dumper=_Dumper, sort_keys=True, default_flow_style=False)
    return text.splitlines()


def mask_secret_values(
    live: Mapping[str, Any] | None, desired: Mapping[str, Any] | None
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """Secret `data` values replaced by `+` runs: equal values get equal masks, different
    values different ones, so a diff shows *that* a key changed, never the value."""
    subject = desired if desired is not None else live
    if subject is None or subject.get("kind") != "Secret":
        return live, desired
    masks: dict[str, str] = {}

    def mask(obj: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        if obj is None or not isinstance(obj.get("data"), Mapping):
            return obj
        data = {k: masks.setdefault(str(v), "+" * (8 + len(masks))) for k, v in obj["data"].items()}
        return {**obj, "data": data}

    return mask(live), mask(desired)


def yaml_diff_lines(
    live: Mapping[str, Any] | None, desired: Mapping[str, Any] | None
) -> tuple[str, ...]:
    live, desired = mask_secret_values(live, desired)
    lines = difflib.unified_diff(_dump(live), _dump(desired), "live", "desired", lineterm="")
    return tuple(lines)


def unified_diff(title: str, diff_lines: tuple[str, ...]) -> str:
    """One resource's section of `headway app diff`."""
    if not diff_lines:
        return ""
    return "\n".join([f"===== {title} ======", *diff_lines]) + "\n"
