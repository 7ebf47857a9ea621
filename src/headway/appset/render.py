"""Rendering an ApplicationSet template with one parameter set. Pure.

Two modes, as Argo CD has them. With `goTemplate: true` every string (and map key) of the
template is a Go template over the parameters (Headway's subset of text/template plus the
Sprig functions of `sprig.py`); `goTemplateOptions: ["missingkey=error"]` makes a missing key
an error instead of `<no value>`. Otherwise `{{name}}` tags are replaced by the flat string
parameter of that name and unknown tags stay as written (fasttemplate).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from headway.appset.sprig import SPRIG_FUNCTIONS
from headway.notify.gotemplate import GoTemplate, TemplateError, parse_template

__all__ = [
    "MISSING_KEY_OPTIONS",
    "RenderFailure",
    "TemplateMode",
    "fill_missing",
    "merge_patch",
    "mode_of",
    "render_text",
    "render_value",
]

MISSING_KEY_OPTIONS = (
    "missingkey=default",
    "missingkey=invalid",
    "missingkey=zero",
    "missingkey=error",
)
_FAST_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)

PathPart = str | int


class RenderFailure(ValueError):
    """A template that could not be rendered: the field (a path into the template) and why."""

    def __init__(self, path: Sequence[PathPart], message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)
        self.message = message


@dataclass(frozen=True)
class TemplateMode:
    go_template: bool
    missing_key_error: bool


def mode_of(spec: Mapping[str, Any]) -> TemplateMode:
    """The template mode of an ApplicationSet `spec` (the last `missingkey=` option wins)."""
    options = [str(o) for o in spec.get("goTemplateOptions") or [] if isinstance(o, str)]
    missing = [o for o in options if o.startswith("missingkey=")]
    return TemplateMode(
        spec.get("goTemplate") is True, bool(missing) and missing[-1] == "missingkey=error"
    )


@lru_cache(maxsize=4096)
def _parsed(text: str) -> GoTemplate:
    return parse_template("applicationset", text)


def render_text(text: str, params: Mapping[str, Any], mode: TemplateMode) -> str:
    """One string rendered; a `TemplateError` says why it could not be."""
    if mode.go_template:
        if "{{" not in text:
            return text
        return _parsed(text).render(
            params, missing_key_error=mode.missing_key_error, functions=SPRIG_FUNCTIONS
        )
    return _FAST_TAG.sub(lambda m: _fast_tag(m, params), text)


def _fast_tag(match: re.Match[str], params: Mapping[str, Any]) -> str:
    value = params.get(match.group(1).strip())
    return value if isinstance(value, str) and match.group(1).strip() else match.group(0)


def render_value(
    value: Any, params: Mapping[str, Any], mode: TemplateMode, path: tuple[PathPart, ...] = ()
) -> Any:
    """`value` with every string and map key rendered; `RenderFailure` names the field."""
    if isinstance(value, str):
        try:
            return render_text(value, params, mode)
        except TemplateError as err:
            raise RenderFailure(path, str(err)) from None
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                continue  # Argo drops nil map values when it copies the template
            new_key = render_value(str(key), params, mode, (*path, str(key)))
            out[new_key] = render_value(item, params, mode, (*path, str(key)))
        return out
    if isinstance(value, list):
        return [render_value(item, params, mode, (*path, i)) for i, item in enumerate(value)]
    return value


def fill_missing(preferred: Mapping[str, Any], fallback: Mapping[str, Any]) -> dict[str, Any]:
    """`preferred` with what it leaves empty taken from `fallback`, deeply (how Argo merges a
    generator's own `template` over the set's template: the generator's fields win)."""
    out = dict(preferred)
    for key, value in fallback.items():
        mine = out.get(key)
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            out[key] = fill_missing(mine, value)
        elif mine in (None, "", [], {}):
            out[key] = value
    return out


def merge_patch(target: Any, patch: Any) -> Any:
    """`patch` merged into `target` (JSON merge patch: maps merge, lists and scalars replace,
    null removes), which is what a strategic merge patch does on an Application's fields."""
    if not isinstance(patch, Mapping):
        return patch
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
