"""The git generator's parameters: one set per matching directory, or per object in each
matching JSON/YAML file, with the `path.*` parameters Argo CD adds. Pure (reads `Inputs`).

With goTemplate the path parameters are a map (`.path.path`, `.path.basename`,
`.path.segments`, ...) and a file's object stays nested; without it, the file's object is
flattened to `a.b.c` strings and the path is `path`, `path.basename`, `path[0]`, ...
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from headway.appset.inputs import InputError, Inputs
from headway.appset.paths import file_glob_matches, path_matches, sanitize_name
from headway.model.yamlload import load_one

__all__ = ["directory_params", "file_params"]

Params = dict[str, Any]


def _patterns(items: Any) -> tuple[list[str], list[str]]:
    include: list[str] = []
    exclude: list[str] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and item.get("path"):
            (exclude if item.get("exclude") else include).append(str(item["path"]))
    return include, exclude


def directory_params(
    inputs: Inputs, *, repo: str, revision: str, items: Any, go_template: bool, prefix: str
) -> list[Params]:
    """A set per repository directory that an include pattern matches and no exclude does."""
    include, exclude = _patterns(items)
    chosen = [
        d
        for d in inputs.directories(repo, revision)
        if any(path_matches(p, d) for p in include) and not any(path_matches(p, d) for p in exclude)
    ]
    return [_path_params(d, None, go_template, prefix) for d in chosen]


def file_params(
    inputs: Inputs, *, repo: str, revision: str, items: Any, go_template: bool, prefix: str
) -> list[Params]:
    """A set per object in each file an include glob matches and no exclude glob does."""
    include, exclude = _patterns(items)
    files = inputs.files(repo, revision)
    chosen = sorted(
        f
        for f in files
        if any(file_glob_matches(p, f) for p in include)
        and not any(file_glob_matches(p, f) for p in exclude)
    )
    out: list[Params] = []
    for path in chosen:
        for obj in _objects(path, inputs.read(repo, revision, path), repo):
            out.append(_file_object_params(obj, path, go_template, prefix))
    return out


def _objects(path: str, content: bytes, repo: str) -> list[dict[str, Any]]:
    """The file's object, or each object of a list; anything else stops generation."""
    try:
        loaded = load_one(content.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise InputError(
            f"unable to process file '{path}' from repository '{repo}': {err}"
        ) from None
    if isinstance(loaded, dict):
        return [loaded]
    if isinstance(loaded, list) and all(isinstance(o, dict) for o in loaded):
        return list(loaded)
    if loaded is None:
        return [{}]
    raise InputError(
        f"unable to process file '{path}' from repository '{repo}': "
        "not an object or a list of objects"
    )


def _file_object_params(
    obj: Mapping[str, Any], path: str, go_template: bool, prefix: str
) -> Params:
    directory = posixpath.dirname(path)
    if go_template:
        return {**obj, **_path_params(directory, path, True, prefix)}
    flat = {k: _go_text(v) for k, v in _flatten(obj).items()}
    return {**flat, **_path_params(directory, path, False, prefix)}


def _path_params(directory: str, file: str | None, go_template: bool, prefix: str) -> Params:
    basename = posixpath.basename(directory)
    values: dict[str, Any] = {
        "path": directory,
        "basename": basename,
        "basenameNormalized": sanitize_name(basename),
    }
    if file is not None:
        filename = posixpath.basename(file)
        values.update(filename=filename, filenameNormalized=sanitize_name(filename))
    if go_template:
        values["segments"] = directory.split("/")
        return {prefix: {"path": values}} if prefix else {"path": values}
    name = f"{prefix}.path" if prefix else "path"
    flat: Params = {name: directory}
    flat.update({f"{name}.{k}": v for k, v in values.items() if k != "path"})
    flat.update({f"{name}[{i}]": seg for i, seg in enumerate(directory.split("/")) if seg})
    return flat


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping) and item:
            out.update(_flatten(item, f"{name}."))
        elif isinstance(item, list) and item:
            out.update(_flatten({str(i): v for i, v in enumerate(item)}, f"{name}."))
        else:
            out[name] = item
    return out


def _go_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, Sequence | Mapping) and not isinstance(value, str):
        return "map[]" if isinstance(value, Mapping) else "[]"
    return str(value)
