"""Validate manifests in files and directories; every problem becomes one diagnostic.

Nothing here raises on bad input: a file that cannot be read or parsed is one diagnostic, and
the remaining files are still checked. Reading files is the only I/O, kept at this edge.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from headway.model import manifests, support
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, load_documents, paused_gc

__all__ = [
    "ValidationReport",
    "check_paths",
    "find_helm_charts",
    "find_manifest_files",
    "validate_documents",
    "validate_paths",
    "validate_text",
]

MANIFEST_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class ValidationReport:
    files: int
    objects: int
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    @property
    def ok(self) -> bool:
        return self.count(Severity.ERROR) == 0


def validate_documents(docs: Iterable[Document]) -> list[Diagnostic]:
    """Diagnostics for already-loaded documents, in document and line order."""
    diagnostics: list[Diagnostic] = []
    with paused_gc():
        for document in docs:
            if manifests.is_object(document):
                _, found = manifests.parse_manifest(document)
                found.extend(_unsupported(document))
                diagnostics.extend(sorted(found, key=lambda d: d.line))
    return diagnostics


def _unsupported(document: Document) -> list[Diagnostic]:
    """What the runtime would refuse in an `argoproj.io` object (`model/support.py`)."""
    obj = document.obj
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    if not isinstance(api_version, str) or not api_version.startswith(f"{manifests.ARGO_GROUP}/"):
        return []
    return support.document_gaps(document, document.kind)


def validate_text(text: str, file: str) -> ValidationReport:
    """Load and validate one file's text."""
    loaded = load_documents(text, file)
    objects = [d for d in loaded.documents if manifests.is_object(d)]
    diagnostics = sorted([*validate_documents(objects), *loaded.diagnostics], key=lambda d: d.line)
    return ValidationReport(1, len(objects), diagnostics)


def find_manifest_files(root: Path) -> list[Path]:
    """`.yaml`/`.yml` files under `root`, sorted; hidden directories and Helm charts skipped.

    A directory holding `Chart.yaml` is a Helm chart whose templates are not plain YAML; it is
    rendered by the source layer, not validated here (`find_helm_charts` lists them).
    """
    return _walk(root)[0]


def find_helm_charts(root: Path) -> list[Path]:
    """The Helm chart directories `find_manifest_files` leaves out under `root`."""
    return _walk(root)[1]


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    if root.is_file():
        return [root], []
    found: list[Path] = []
    charts: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        if "Chart.yaml" in files:
            subdirs[:] = []
            charts.append(Path(directory))
            continue
        found.extend(Path(directory, f) for f in sorted(files) if f.endswith(MANIFEST_SUFFIXES))
    return found, charts


def _skipped_chart(chart: Path) -> Diagnostic:
    message = (
        "skipped: a Helm chart (its templates are not plain YAML); validate what it renders "
        f"(helm template {chart} > rendered.yaml, then headway validate rendered.yaml), or run "
        "headway check on the repository, which renders charts and reports the same errors"
    )
    return Diagnostic(str(chart), 0, "", "", "", Severity.INFO, message)


def check_paths(paths: Sequence[str | Path]) -> ValidationReport:
    """Validate every manifest file under `paths`; the counts feed the CLI summary."""
    files = objects = 0
    diagnostics: list[Diagnostic] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            diagnostics.append(_file_problem(str(given), "no such file or directory"))
            continue
        manifest_files, charts = _walk(root)
        diagnostics.extend(_skipped_chart(chart) for chart in charts)
        for path in manifest_files:
            report = _check_file(path)
            files += report.files
            objects += report.objects
            diagnostics.extend(report.diagnostics)
    return ValidationReport(files, objects, diagnostics)


def validate_paths(paths: Sequence[str | Path]) -> list[Diagnostic]:
    """Diagnostics for every manifest file under `paths` (files and directories)."""
    return check_paths(paths).diagnostics


def _check_file(path: Path) -> ValidationReport:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ValidationReport(1, 0, [_file_problem(str(path), "not UTF-8 text")])
    except OSError as err:
        return ValidationReport(1, 0, [_file_problem(str(path), err.strerror or str(err))])
    return validate_text(text, str(path))


def _file_problem(file: str, message: str) -> Diagnostic:
    return Diagnostic(file, 1, "", "", "", Severity.ERROR, message)
