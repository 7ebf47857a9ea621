"""Plain manifests from a directory, with Argo CD's `directory` options.

Follows Argo CD's `findManifests`: files ending in .yaml/.yml/.json directly in `path` (every
level below too with `recurse: true`; any name with `disableExtensionFilter: true`); `exclude`
then `include` globs match the path relative to the app path (see `headway.source.globs`); a
file containing `+argocd:skip-file-rendering` is skipped. Hidden files are read like any
other, as Argo CD does.

A YAML file that holds no Kubernetes object is skipped (Argo CD ignores it silently; Headway says
so in a warning), unless it looks like a manifest (mentions `apiVersion:`, `kind:` and
`metadata:`) or holds other objects: then the bad document is an error with its line. Headway is
stricter in one case: a document with only one of `apiVersion` / `kind` is a broken manifest and
an error (Argo CD would skip the file and the object would silently not be deployed).
`.jsonnet` files are evaluated with `directory.jsonnet` (`headway.source.render_jsonnet`); a
render that evaluates one depends on the whole repository and on the build environment, since
imports and libraries can be anywhere in it and values can name the revision.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial

from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, LoadResult, load_documents, load_documents_fast
from headway.source import render_jsonnet
from headway.source.build_env import build_environment
from headway.source.errors import LinkLeavesRepository, PathNotFound, RenderError
from headway.source.globs import compile_glob
from headway.source.render import RenderRequest, RenderResult
from headway.source.spec import spec_section
from headway.source.tree import GitTree

__all__ = ["DirectoryRenderer", "ManifestLoader", "load_manifest_file", "manifest_objects"]

_MANIFEST_FILE = re.compile(r"\.(yaml|yml|json|jsonnet)$")
_SKIP_MARKER = b"+argocd:skip-file-rendering"


def _is_object(obj: object) -> bool:
    if not isinstance(obj, dict):
        return False
    api, kind = obj.get("apiVersion"), obj.get("kind")
    return isinstance(api, str) and bool(api) and isinstance(kind, str) and bool(kind)


def _looks_like_manifest(text: str) -> bool:
    return all(marker in text for marker in ("apiVersion:", "kind:", "metadata:"))


def _file_diagnostic(file: str, line: int, severity: Severity, message: str) -> Diagnostic:
    return Diagnostic(file, line, "", "", "", severity, message)


def load_manifest_file(
    file: str, data: bytes, *, field_lines: bool = True
) -> tuple[list[Document], list[Diagnostic]]:
    """The Kubernetes objects of one manifest file, with Argo CD's leniency for other YAML
    (read without node trees when no one will ask for a field's line)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return [], [_file_diagnostic(file, 1, Severity.ERROR, f"not UTF-8 text: {err}")]
    load = load_documents if field_lines else load_documents_fast
    return manifest_objects(file, text, load(text, file))


def manifest_objects(
    file: str, text: str, loaded: LoadResult
) -> tuple[list[Document], list[Diagnostic]]:
    """`load_manifest_file` for a file already loaded (`text` decoded, `loaded` parsed)."""
    objects: list[Document] = []
    strangers: list[Document] = []
    for document in loaded.documents:
        (objects if _is_object(document.obj) else strangers).append(document)
    if file.endswith(".json") and len(loaded.documents) > 1:
        message = "holds several objects; a JSON manifest file holds exactly one"
        return [], [_file_diagnostic(file, loaded.documents[1].line, Severity.ERROR, message)]
    if not strangers and not loaded.diagnostics:
        return objects, []
    half_objects = any(
        isinstance(d.obj, dict) and ("apiVersion" in d.obj or "kind" in d.obj) for d in strangers
    )
    if objects or half_objects or _looks_like_manifest(text):
        problems = list(loaded.diagnostics)
        problems.extend(
            _file_diagnostic(
                file,
                doc.line,
                Severity.ERROR,
                f"document {doc.index + 1} is not a Kubernetes object (it needs apiVersion "
                "and kind)",
            )
            for doc in strangers
        )
        return objects, problems
    reason = "not a Kubernetes manifest; skipped, as Argo CD does"
    return [], [_file_diagnostic(file, 1, Severity.WARNING, reason)]


# (file, content) -> the file's objects and problems; `headway check` passes one that reuses
# the parse of its repository scan.
ManifestLoader = Callable[[str, bytes], tuple[list[Document], list[Diagnostic]]]


class DirectoryRenderer:
    name = "Directory"

    def __init__(self, load_file: ManifestLoader | None = None) -> None:
        # None: `load_manifest_file`, with field lines only where the request wants them.
        self._load_file = load_file

    def inputs(self, request: RenderRequest) -> tuple[str, ...]:
        own = (request.tree.object_id(request.path), *_linked_inputs(request))
        if not _holds_jsonnet(request):
            return own
        environment = json.dumps(build_environment(request), sort_keys=True)
        return (*own, request.revision or request.tree.object_id(""), environment)

    def render(self, request: RenderRequest) -> RenderResult:
        spec = spec_section(request.source, "directory")
        include = str(spec.get("include") or "")
        exclude = str(spec.get("exclude") or "")
        include_re = compile_glob(include, "directory.include") if include else None
        exclude_re = compile_glob(exclude, "directory.exclude") if exclude else None
        recurse = bool(spec.get("recurse", False))
        any_extension = bool(spec.get("disableExtensionFilter", False))
        if request.tree.kind(request.path) != "dir":
            where = request.tree.description
            raise RenderError(f"app path {request.path or '/'!r} does not exist in {where}")
        prefix = f"{request.path}/" if request.path else ""
        documents: list[Document] = []
        diagnostics: list[Diagnostic] = []
        chosen: list[str] = []
        load_file = self._load_file or partial(load_manifest_file, field_lines=request.field_lines)
        for file in request.tree.files(request.path):
            relative = file[len(prefix) :]
            if not recurse and "/" in relative:
                continue
            if not any_extension and not _MANIFEST_FILE.search(relative):
                continue
            if exclude_re is not None and exclude_re.match(relative):
                continue
            if include_re is not None and not include_re.match(relative):
                continue
            chosen.append(file)
            data = _content(request, file)
            if data is None:
                diagnostics.append(_file_diagnostic(file, 1, Severity.WARNING, _NOT_A_FILE))
                continue
            if _SKIP_MARKER in data:
                continue
            if relative.endswith(".jsonnet"):
                found, problems = self._evaluate(request, file, spec)
            else:
                found, problems = load_file(file, data)
            documents.extend(found)
            diagnostics.extend(problems)
        return RenderResult(self.name, tuple(documents), tuple(diagnostics), tuple(chosen))

    def _evaluate(
        self, request: RenderRequest, file: str, spec: dict[str, object]
    ) -> tuple[list[Document], list[Diagnostic]]:
        raw = spec.get("jsonnet")
        options = render_jsonnet.jsonnet_options(
            raw if isinstance(raw, dict) else {}, build_environment(request)
        )
        return render_jsonnet.evaluate_jsonnet(
            request.tree, file, app_path=request.path, options=options
        )


_NOT_A_FILE = (
    "a symlink whose destination is missing or is not a file; skipped, as Argo CD does"
)


def _content(request: RenderRequest, file: str) -> bytes | None:
    """The listed file's bytes; None for a name that reads as no file (a dangling symlink,
    a link to a directory). A link leaving the repository stays an error, as in Argo CD."""
    try:
        return request.tree.read(file)
    except LinkLeavesRepository:
        raise
    except PathNotFound:
        return None


def _linked_inputs(request: RenderRequest) -> tuple[str, ...]:
    """What the path's symlinks lead to outside it, with its content id: a render reads
    through them, so a change there is a change of this render's input (a Git tree's id
    for the path does not move when only a link's target does). On disk, `object_id`
    already hashes the content a link leads to."""
    if not isinstance(request.tree, GitTree):
        return ()
    recurse = bool(spec_section(request.source, "directory").get("recurse", False))
    targets = request.tree.links_leaving(request.path, recursive=recurse)
    return tuple(f"{t}@{_object_id_or_missing(request, t)}" for t in targets)


def _object_id_or_missing(request: RenderRequest, path: str) -> str:
    try:
        return request.tree.object_id(path)
    except PathNotFound:
        return "missing"


def _holds_jsonnet(request: RenderRequest) -> bool:
    """Whether a `.jsonnet` file may be evaluated: in the app directory, or below it when the
    source recurses (a cheap over-approximation: include/exclude are not applied)."""
    spec = spec_section(request.source, "directory")
    if request.tree.kind(request.path) != "dir":
        return False
    listing = (
        request.tree.files(request.path)
        if spec.get("recurse")
        else request.tree.names(request.path)
    )
    return any(name.endswith(".jsonnet") for name in listing)
