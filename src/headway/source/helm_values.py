"""Helm values as Argo CD composes them: value files in order, then `values`/`valuesObject`,
then `parameters` (all `--set` ones, then the `forceString` ones).

Value file paths are relative to the chart path (a leading `/` means the repository root). A path
whose first segment is `$name` reads from the root of the source with `ref: name` (multi-source
Applications); `$` anywhere else is an error, since Argo CD would silently read a literal
directory named `$name`. A missing file is an error naming it, unless `ignoreMissingValueFiles`
is set; Headway then still warns, because that flag also hides a renamed `values-prod.yaml`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from headway.model import yamlload
from headway.model.diagnostics import Diagnostic, Severity
from headway.source.errors import RenderError
from headway.source.render import RenderRequest
from headway.source.spec import spec_section
from headway.source.tree import TreeReader, normalize_path

__all__ = [
    "ComposedValues",
    "ValueFile",
    "compose_values",
    "merge_maps",
    "resolve_value_files",
    "set_expression",
]



@dataclass(frozen=True)
class ValueFile:
    """One entry of `helm.valueFiles`: as written, and where it resolves."""

    written: str
    path: str  # relative to `tree`'s root
    tree: TreeReader
    exists: bool


@dataclass(frozen=True)
class ComposedValues:
    """Values from files and inline values, plus the parameters still to apply on top."""

    values: dict[str, Any]
    set_params: tuple[str, ...]  # `name=value` expressions for `--set`
    set_string_params: tuple[str, ...]  # ... for `--set-string`
    diagnostics: tuple[Diagnostic, ...]


def merge_maps(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of successive values files: maps merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = merge_maps(current, value)
        else:
            out[key] = value
    return out


def _resolve_one(written: str, request: RenderRequest) -> tuple[str, TreeReader]:
    segments = written.split("/")
    if segments[0].startswith("$"):
        ref = segments[0][1:]
        tree = request.refs.get(ref)
        if tree is None:
            known = ", ".join(sorted(request.refs)) or "none"
            raise RenderError(
                f"helm.valueFiles: {written!r} reads from ${ref}, but no source of the "
                f"Application has `ref: {ref}` (refs: {known})"
            )
        return normalize_path("/".join(segments[1:])), tree
    if any("$" in segment for segment in segments):
        raise RenderError(
            f"helm.valueFiles: {written!r}: a $ref must be the first path segment "
            "(e.g. $values/envs/prod.yaml)"
        )
    if "://" in written:
        raise RenderError(f"helm.valueFiles: {written!r}: remote value files are not supported")
    if written.startswith("/"):
        return normalize_path(written), request.tree
    return normalize_path(f"{request.path}/{written}"), request.tree


def resolve_value_files(request: RenderRequest) -> list[ValueFile]:
    helm = spec_section(request.source, "helm")
    files = helm.get("valueFiles") or []
    resolved: list[ValueFile] = []
    for written in files:
        path, tree = _resolve_one(str(written), request)
        resolved.append(ValueFile(str(written), path, tree, tree.kind(path) == "file"))
    return resolved


def _load_mapping(text: str, where: str) -> dict[str, Any]:
    try:
        loaded = yamlload.load_one(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise RenderError(f"invalid YAML: {err.problem}", f"{where}{line}") from None
    except yaml.YAMLError as err:  # aliases that repeat too much (yamlload.AliasError)
        raise RenderError(str(err), where) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise RenderError("values must be a mapping at the top level", where)
    return loaded


def _file_values(request: RenderRequest) -> tuple[dict[str, Any], list[Diagnostic]]:
    ignore_missing = bool(spec_section(request.source, "helm").get("ignoreMissingValueFiles"))
    values: dict[str, Any] = {}
    diagnostics: list[Diagnostic] = []
    for file in resolve_value_files(request):
        if not file.exists:
            if not ignore_missing:
                raise RenderError(
                    f"value file does not exist in {file.tree.description}", file.written
                )
            message = (
                "value file does not exist and is skipped (ignoreMissingValueFiles); "
                "a renamed or mistyped file is silently dropped this way"
            )
            diagnostics.append(
                Diagnostic(file.written, 1, "", "", "helm.valueFiles", Severity.WARNING, message)
            )
            continue
        text = file.tree.read(file.path).decode("utf-8-sig")
        values = merge_maps(values, _load_mapping(text, file.written))
    return values, diagnostics


def set_expression(name: str, value: str) -> str:
    """`name=value` for `--set`, escaping commas unless the value is a `{a,b}` list (Argo CD)."""
    if value.startswith("{") and value.endswith("}"):
        return f"{name}={value}"
    escaped = []
    previous = ""
    for char in value:
        escaped.append("\\," if char == "," and previous != "\\" else char)
        previous = char
    return f"{name}={''.join(escaped)}"


def compose_values(request: RenderRequest) -> ComposedValues:
    helm = spec_section(request.source, "helm")
    values, diagnostics = _file_values(request)
    inline = helm.get("valuesObject")
    if isinstance(inline, dict):
        values = merge_maps(values, inline)  # valuesObject replaces `values` entirely
    elif helm.get("values"):
        values = merge_maps(values, _load_mapping(str(helm["values"]), "helm.values"))
    set_params: list[str] = []
    string_params: list[str] = []
    for param in helm.get("parameters") or []:
        if not isinstance(param, dict) or not param.get("name"):
            raise RenderError("helm.parameters: every parameter needs a name")
        expression = set_expression(str(param["name"]), str(param.get("value", "")))
        (string_params if param.get("forceString") else set_params).append(expression)
    return ComposedValues(values, tuple(set_params), tuple(string_params), tuple(diagnostics))
