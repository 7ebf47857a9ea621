"""Applications and AppProjects from a local file or directory (`headway serve --apps PATH`),
published into the control-plane store where the controller finds them.

Applications from Git need nothing here: a root Application (app-of-apps) whose path holds
Application manifests syncs them into the store like any other resource, exactly as in
Argo CD. Every document is validated first; a bad one is reported with file, line and field
and skipped, never half-applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.app.names import DEFAULT_APPS_NAMESPACE
from headway.model.application import parse_application
from headway.model.appproject import parse_appproject
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, load_documents

__all__ = [
    "DEFAULT_APPS_NAMESPACE",
    "Definitions",
    "DefinitionsWatcher",
    "load_definitions",
    "publish",
]

PUBLISHER = "headway-apps"
PUBLISHED_FROM = "headway.dev/published-from"
_KINDS = {"Application": parse_application, "AppProject": parse_appproject}
_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Definitions:
    objects: tuple[dict[str, Any], ...]
    diagnostics: tuple[Diagnostic, ...]


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)


def _checked(document: Document) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    if document.obj is not None and not isinstance(document.obj, dict):
        return None, [_not_a_manifest(document)]
    parse = _KINDS.get(document.kind)
    if parse is None or not isinstance(document.obj, dict):
        return None, []
    if document.obj.get("apiVersion") != "argoproj.io/v1alpha1":
        return None, []
    parsed, diagnostics = parse(document)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    return (None if parsed is None or errors else document.obj), diagnostics


def _not_a_manifest(document: Document) -> Diagnostic:
    """A document that is a list (or a bare value) holds no manifest: said, not skipped."""
    found = "a list" if isinstance(document.obj, list) else type(document.obj).__name__
    message = (
        f"expected one Application or AppProject manifest (a mapping), found {found};"
        " write each manifest as its own YAML document, separated by `---`"
    )
    return Diagnostic(document.file, document.line, "", "", "", Severity.ERROR, message)


def load_definitions(path: Path) -> Definitions:
    """Every valid Application and AppProject under `path`; other kinds are ignored, and a
    document that is not a manifest at all (a YAML list) is an error."""
    if not path.exists():
        missing = Diagnostic(str(path), 0, "", "", "", Severity.ERROR, "no such file or directory")
        return Definitions((), (missing,))
    objects: list[dict[str, Any]] = []
    diagnostics: list[Diagnostic] = []
    for file in _files(path):
        text, unreadable = _read_text(file)
        if unreadable is not None:
            diagnostics.append(unreadable)
            continue
        loaded = load_documents(text, str(file))
        diagnostics.extend(loaded.diagnostics)
        for document in loaded.documents:
            obj, found = _checked(document)
            diagnostics.extend(found)
            if obj is not None:
                objects.append(obj)
    return Definitions(tuple(objects), tuple(diagnostics))


def _read_text(file: Path) -> tuple[str, Diagnostic | None]:
    """The file's text, or a diagnostic naming the file (and the line of a byte that is
    not UTF-8) instead of the decoder's traceback."""
    try:
        data = file.read_bytes()
    except OSError as err:
        return "", Diagnostic(str(file), 0, "", "", "", Severity.ERROR, err.strerror or str(err))
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        message = f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})"
        return "", Diagnostic(str(file), line, "", "", "", Severity.ERROR, message)


def publish(cluster: Cluster, definitions: Definitions, *, source: str = "") -> list[str]:
    """Apply the definitions (namespace `argocd` unless they name one); returns errors.
    With `source`, each is marked as published from it, and objects marked so that are no
    longer defined are deleted."""
    errors: list[str] = []
    published: set[tuple[str, str, str]] = set()
    for obj in definitions.objects:
        meta = dict(obj.get("metadata") or {})
        meta.setdefault("namespace", DEFAULT_APPS_NAMESPACE)
        if source:
            meta["annotations"] = {**(meta.get("annotations") or {}), PUBLISHED_FROM: source}
        published.add((str(obj.get("kind")), str(meta["namespace"]), str(meta.get("name"))))
        try:
            _ensure_namespace(cluster, str(meta["namespace"]))
            body = {k: v for k, v in obj.items() if k not in ("status", "operation")}
            cluster.apply({**body, "metadata": meta}, field_manager=PUBLISHER, force=True)
        except ClusterError as err:
            errors.append(f"{obj.get('kind')}/{meta.get('name')}: {err}")
    if source and not any(d.severity is Severity.ERROR for d in definitions.diagnostics):
        errors += _withdraw(cluster, source, published)
    return errors


def _withdraw(cluster: Cluster, source: str, published: set[tuple[str, str, str]]) -> list[str]:
    """Delete what an earlier publish from `source` created and the files no longer define.
    Skipped when any file had an error, so a typo never deletes an Application."""
    errors = []
    for kind in _KINDS:
        for obj in cluster.list("argoproj.io/v1alpha1", kind):
            meta = obj["metadata"]
            if (meta.get("annotations") or {}).get(PUBLISHED_FROM) != source:
                continue
            if (kind, str(meta.get("namespace")), str(meta["name"])) in published:
                continue
            try:
                cluster.delete("argoproj.io/v1alpha1", kind, meta["name"], meta.get("namespace"))
            except ClusterError as err:
                errors.append(f"{kind}/{meta['name']}: {err}")
    return errors


def _ensure_namespace(cluster: Cluster, name: str) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    cluster.apply(namespace, field_manager=PUBLISHER)


class DefinitionsWatcher:
    """Re-publishes the definitions under a path whenever a file there changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._signature: tuple[tuple[str, int, int], ...] | None = None

    def _current(self) -> tuple[tuple[str, int, int], ...]:
        if not self.path.exists():
            return ()
        out = []
        for file in _files(self.path):
            stat = file.stat()
            out.append((str(file), stat.st_mtime_ns, stat.st_size))
        return tuple(out)

    def sync(self, cluster: Cluster) -> list[str] | None:
        """Publish if anything changed since the last call; the problems found, or None
        when nothing changed."""
        signature = self._current()
        if signature == self._signature:
            return None
        self._signature = signature
        definitions = load_definitions(self.path)
        problems = [str(d) for d in definitions.diagnostics if d.severity is Severity.ERROR]
        return problems + publish(cluster, definitions, source=str(self.path.resolve()))
