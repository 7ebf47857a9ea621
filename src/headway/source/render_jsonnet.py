"""Jsonnet files of a directory source, evaluated as Argo CD's repo server evaluates them.

Argo CD (`findManifests`, `makeJsonnetVM`) evaluates every chosen `.jsonnet` file of a directory
source with the source's `directory.jsonnet`: `extVars` and `tlas` (each a string, or Jsonnet
code with `code: true`; `$VAR` in a value is replaced from the build environment first), and
`libs`, library directories relative to the repository root. An import is looked up next to the
importing file, then in the libraries (the last one first), then in the app directory. The
output is an array of objects or a single object.

Headway evaluates with the Jsonnet library (the `jsonnet` extra) and reads every file through
the source tree, so an import is always a file of the repository at the rendered commit. It is
stricter than Argo CD in one way: an import that leaves the repository (an absolute path, or
`../` past the root) is refused, where Argo CD would read the repo server's own files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document
from headway.source.build_env import envsubst
from headway.source.errors import PathNotFound, RenderError
from headway.source.tools import load_jsonnet
from headway.source.tree import TreeReader, normalize_path

__all__ = ["JsonnetOptions", "evaluate_jsonnet", "jsonnet_options"]

# `path/to/file.jsonnet:12:3-9` in the library's error text: the first one is where it failed.
_LOCATION = re.compile(r"(?P<file>[^\s:]+\.(?:jsonnet|libsonnet|json)):(?P<line>\d+)")


@dataclass(frozen=True)
class JsonnetVar:
    name: str
    value: str
    code: bool


@dataclass(frozen=True)
class JsonnetOptions:
    """A source's `directory.jsonnet`, with `$VAR`s already replaced."""

    ext_vars: tuple[JsonnetVar, ...] = ()
    tlas: tuple[JsonnetVar, ...] = ()
    libs: tuple[str, ...] = ()


def jsonnet_options(spec: Mapping[str, Any], env: Mapping[str, str]) -> JsonnetOptions:
    """`directory.jsonnet` as written, its values expanded from the build environment `env`."""
    libs: list[str] = []
    for lib in spec.get("libs") or ():
        try:
            libs.append(normalize_path(str(lib)))
        except PathNotFound:
            message = f"directory.jsonnet.libs: {lib!r} leaves the repository"
            raise RenderError(message) from None
    return JsonnetOptions(
        ext_vars=_vars(spec.get("extVars"), env),
        tlas=_vars(spec.get("tlas"), env),
        libs=tuple(libs),
    )


def _vars(raw: object, env: Mapping[str, str]) -> tuple[JsonnetVar, ...]:
    entries = raw if isinstance(raw, list) else []
    return tuple(
        JsonnetVar(
            str(e.get("name", "")), envsubst(str(e.get("value", "")), env), bool(e.get("code"))
        )
        for e in entries
        if isinstance(e, Mapping)
    )


@dataclass(frozen=True)
class _Importer:
    """Resolves `import` as go-jsonnet's FileImporter does, but only inside the tree.

    Each refusal is also kept in `refusals`: go-jsonnet's Python binding (0.22) reads the
    message of an exception raised here past its end, so the library's error text can carry
    bytes of an earlier message, or not be UTF-8 at all (the evaluation then raises
    UnicodeDecodeError). `evaluate_jsonnet` says the refusal in its own words instead."""

    tree: TreeReader
    search_path: tuple[str, ...]  # the app directory, then the libraries
    refusals: list[tuple[str, str]] = field(default_factory=list)  # (import, reason)

    def __call__(self, directory: str, imported: str) -> tuple[str, bytes]:
        try:
            return self._resolve(directory, imported)
        except RuntimeError as err:
            self.refusals.append((imported, str(err)))
            raise

    def _resolve(self, directory: str, imported: str) -> tuple[str, bytes]:
        if imported.startswith("/"):
            raise RuntimeError(
                f"{imported} is outside the repository (absolute imports are refused)"
            )
        try:
            beside = normalize_path(f"{directory}{imported}")
        except PathNotFound:
            raise RuntimeError(f"{imported} leaves the repository (refused)") from None
        candidates = [beside]
        for root in reversed(self.search_path):
            try:
                candidates.append(normalize_path(f"{root}/{imported}"))
            except PathNotFound:
                continue  # a library path cannot climb out either
        candidates = list(dict.fromkeys(candidates))  # beside the file may be the app dir
        for candidate in candidates:
            if self.tree.kind(candidate) == "file":
                try:
                    return candidate, self.tree.read(candidate)
                except PathNotFound as err:  # a symlink that leaves the repository
                    raise RuntimeError(str(err)) from None
        raise RuntimeError(f"not found in the repository (looked at {', '.join(candidates)})")


def evaluate_jsonnet(
    tree: TreeReader, file: str, *, app_path: str, options: JsonnetOptions
) -> tuple[list[Document], list[Diagnostic]]:
    """The objects one `.jsonnet` file evaluates to, or an error naming where it failed."""
    jsonnet = load_jsonnet()
    importer = _Importer(tree, (app_path, *options.libs))
    try:
        text = tree.read(file).decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return [], [_error(file, 1, f"not UTF-8 text: {err}")]
    try:
        output = jsonnet.evaluate_snippet(
            file,
            text,
            import_callback=importer,
            ext_vars={v.name: v.value for v in options.ext_vars if not v.code},
            ext_codes={v.name: v.value for v in options.ext_vars if v.code},
            tla_vars={v.name: v.value for v in options.tlas if not v.code},
            tla_codes={v.name: v.value for v in options.tlas if v.code},
        )
    except (RuntimeError, UnicodeDecodeError) as err:
        refused = _refused_import(file, importer, err)
        if refused is not None:
            return [], [refused]
        if isinstance(err, UnicodeDecodeError):  # the library's own message, not the file
            return [], [_error(file, 1, f"Jsonnet evaluation of {file} failed (the "
                               f"library's message is not UTF-8 text: {err})")]
        return [], [_evaluation_error(file, str(err))]
    return _objects(file, json.loads(output))


def _refused_import(file: str, importer: _Importer, err: Exception) -> Diagnostic | None:
    """The evaluation's failure if it is the importer's last refusal, in Headway's words,
    placed where the library's trace says the import was: the trace is on tab-indented
    lines after the message, which the binding's overrun (see `_Importer`) leaves intact.
    None when the failure is something else (an import refused where its value was never
    needed does not fail an evaluation)."""
    if not importer.refusals:
        return None
    imported, reason = importer.refusals[-1]
    text = str(err) if isinstance(err, RuntimeError) else ""
    if text and reason not in text.partition("\n")[0]:
        return None
    trace = "\n".join(line for line in text.splitlines() if line.startswith("\t"))
    refusal = f"RUNTIME ERROR: couldn't import {imported!r}: {reason}\n{trace}"
    return _evaluation_error(file, refusal)


def _objects(file: str, value: object) -> tuple[list[Document], list[Diagnostic]]:
    """An array of objects or one object, as Argo CD accepts; anything else is an error."""
    items = value if isinstance(value, list) else [value]
    documents: list[Document] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            where = f"element {index} of the output array" if isinstance(value, list) else "output"
            kind = "null" if item is None else type(item).__name__
            message = f"Jsonnet {where} is a {kind}; it must be a Kubernetes object"
            return [], [_error(file, 1, message)]
        documents.append(Document(item, file, index, 1))
    return documents, []


def _evaluation_error(file: str, text: str) -> Diagnostic:
    """The library's message on one line, placed at the file and line it names first."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    message = "; ".join(" ".join(line.split()) for line in lines)
    found = _LOCATION.search(text)
    where, line = (found["file"], int(found["line"])) if found else (file, 1)
    return _error(where, line, f"Jsonnet evaluation of {file} failed: {message}")


def _error(file: str, line: int, message: str) -> Diagnostic:
    return Diagnostic(file, line, "", "", "", Severity.ERROR, message)
