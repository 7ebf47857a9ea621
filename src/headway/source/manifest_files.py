"""Manifest files on disk, for `headway validate`: finding them and reading their text.

The validation itself is pure (`headway.model.validate`); this edge walks the given paths,
reads each file, and turns a file that is missing, unreadable or not UTF-8 into one diagnostic
so the remaining files are still checked. A `.jsonnet` file is evaluated (with no extVars or
TLAs: those belong to an Application) and its objects validated like a YAML file's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from headway.model import manifests
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.validate import ValidationReport, file_problem, validate_documents
from headway.model.yamlload import Document, load_documents

# ApplicationSet rendering (with its generators) and Jsonnet (with Git's tree reader) load
# when a file has a set or a .jsonnet file is met: `headway validate` of plain manifests is
# mostly start-up, and these are most of its imports.
if TYPE_CHECKING:
    from headway.source.plugins import PluginCatalog

__all__ = [
    "check_paths",
    "find_helm_charts",
    "find_manifest_files",
    "validate_paths",
]

MANIFEST_SUFFIXES = (".yaml", ".yml")
# The Jsonnet library's words for a value only the Application can give.
_NEEDS_VALUES = re.compile(
    r"undefined external variable|function parameter \S+ not bound|missing argument",
    re.IGNORECASE,
)


def find_manifest_files(root: Path) -> list[Path]:
    """`.yaml`/`.yml` files under `root`, sorted; hidden directories and Helm charts skipped.

    A directory holding `Chart.yaml` is a Helm chart whose templates are not plain YAML; it is
    rendered by the source layer, not validated here (`find_helm_charts` lists them).
    """
    return _walk(root)[0]


def find_helm_charts(root: Path) -> list[Path]:
    """The Helm chart directories `find_manifest_files` leaves out under `root`."""
    return _walk(root)[1]


def _walk(root: Path) -> tuple[list[Path], list[Path], list[Path]]:
    if root.is_file():
        return ([], [], [root]) if root.suffix == ".jsonnet" else ([root], [], [])
    found: list[Path] = []
    charts: list[Path] = []
    jsonnet: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        if "Chart.yaml" in files:
            subdirs[:] = []
            charts.append(Path(directory))
            continue
        found.extend(Path(directory, f) for f in sorted(files) if f.endswith(MANIFEST_SUFFIXES))
        jsonnet.extend(Path(directory, f) for f in sorted(files) if f.endswith(".jsonnet"))
    return found, charts, jsonnet


def _skipped_chart(chart: Path) -> Diagnostic:
    message = (
        "skipped: a Helm chart (its templates are not plain YAML); validate what it renders "
        f"(helm template {chart} > rendered.yaml, then headway validate rendered.yaml), or run "
        "headway check on the repository, which renders charts and reports the same errors"
    )
    return Diagnostic(str(chart), 0, "", "", "", Severity.INFO, message)


def _check_jsonnet(root: Path, path: Path) -> ValidationReport:
    """A `.jsonnet` file evaluated on its own (imports read under `root`), its objects
    validated. One that needs values only its Application gives (an extVar, a TLA without a
    default) is left to `headway check`, which renders it with them: a note, not an error."""
    from headway.source import render_jsonnet
    from headway.source.errors import ToolNotInstalled
    from headway.source.tree import FilesystemTree

    base = root if root.is_dir() else root.parent
    relative = path.relative_to(base).as_posix()
    app_path = relative.rpartition("/")[0]
    try:
        documents, problems = render_jsonnet.evaluate_jsonnet(
            FilesystemTree(base),
            relative,
            app_path=app_path,
            options=render_jsonnet.JsonnetOptions(),
        )
    except ToolNotInstalled as err:
        return ValidationReport(1, 0, [file_problem(str(path), str(err))])
    if any(_NEEDS_VALUES.search(p.message) for p in problems):
        return ValidationReport(1, 0, [_needs_values(path)])
    on_disk = [replace(d, file=str(base / d.file)) for d in documents]
    moved = [replace(p, file=str(base / p.file)) for p in problems]
    return ValidationReport(1, len(on_disk), [*moved, *validate_documents(on_disk)])


def _needs_values(path: Path) -> Diagnostic:
    message = (
        "not evaluated: it needs an extVar or a top-level argument its Application gives; "
        "headway check renders it with the Application's directory.jsonnet"
    )
    return Diagnostic(str(path), 0, "", "", "", Severity.INFO, message)


def check_paths(
    paths: Sequence[str | Path], *, plugins: PluginCatalog | None = None
) -> ValidationReport:
    """Validate every manifest file under `paths`; the counts feed the CLI summary. With
    `plugins`, an Application naming a config management plugin that is not there is an
    error at `source.plugin.name`."""
    files = objects = 0
    diagnostics: list[Diagnostic] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            diagnostics.append(file_problem(str(given), "no such file or directory"))
            continue
        manifest_files, charts, jsonnet = _walk(root)
        diagnostics.extend(_skipped_chart(chart) for chart in charts)
        reports = [_check_file(path, plugins) for path in manifest_files]
        reports.extend(_check_jsonnet(root, path) for path in jsonnet)
        for report in reports:
            files += report.files
            objects += report.objects
            diagnostics.extend(report.diagnostics)
    return ValidationReport(files, objects, diagnostics)


def validate_paths(paths: Sequence[str | Path]) -> list[Diagnostic]:
    """Diagnostics for every manifest file under `paths` (files and directories)."""
    return check_paths(paths).diagnostics


def _check_file(path: Path, plugins: PluginCatalog | None = None) -> ValidationReport:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ValidationReport(1, 0, [file_problem(str(path), "not UTF-8 text")])
    except OSError as err:
        return ValidationReport(1, 0, [file_problem(str(path), err.strerror or str(err))])
    return _validate_with_sets(text, str(path), plugins)


def _validate_with_sets(
    text: str, file: str, plugins: PluginCatalog | None = None
) -> ValidationReport:
    """`validate_text`, plus the Applications each ApplicationSet of the file generates,
    validated as written ones are; a set whose generators need a repository is not rendered
    here (a warning says so: `headway check` renders it)."""
    loaded = load_documents(text, file)
    objects = [d for d in loaded.documents if manifests.is_object(d)]
    diagnostics = [
        *validate_documents(objects),
        *loaded.diagnostics,
        *_application_set_problems(objects),
        *(_unknown_plugins(objects, plugins) if plugins is not None else []),
    ]
    return ValidationReport(1, len(objects), sorted(diagnostics, key=lambda d: d.line))


_READS_NO_REPOSITORY = (
    "headway validate reads no repository; headway check renders this set from the checkout"
)


def _application_set_problems(objects: Sequence[Document]) -> list[Diagnostic]:
    """Why a set was not rendered, the run-time-only warnings, then the errors of the
    Applications the sets generate (once per template field)."""
    if not any(d.kind == "ApplicationSet" for d in objects):
        return []  # nothing to render (`render_documents` picks sets by kind and group)
    from headway.appset.documents import once_per_template, render_documents
    from headway.appset.inputs import StaticInputs

    sets = render_documents(
        objects,
        StaticInputs(unavailable_hint=_READS_NO_REPOSITORY),
        missing_inputs=Severity.WARNING,
    )
    generated = [d for d in validate_documents(sets.applications) if d.severity is Severity.ERROR]
    return [*sets.diagnostics, *sets.run_time_only, *once_per_template(generated)]


def _unknown_plugins(documents: Sequence[Document], plugins: PluginCatalog) -> list[Diagnostic]:
    """Applications whose `source.plugin.name` names no plugin of the catalog."""
    problems: list[Diagnostic] = []
    for document in documents:
        if document.kind != "Application" or not isinstance(document.obj.get("spec"), dict):
            continue
        spec = document.obj["spec"]
        listed = spec.get("sources") if isinstance(spec.get("sources"), list) else None
        located = (
            [(("spec", "sources", i), s) for i, s in enumerate(listed)]
            if listed
            else [(("spec", "source"), spec.get("source"))]
        )
        for where, source in located:
            plugin = source.get("plugin") if isinstance(source, dict) else None
            name = plugin.get("name") if isinstance(plugin, dict) else None
            if isinstance(name, str) and name and plugins.named(name) is None:
                message = f"no plugin {name!r} ({plugins.describe()})"
                problems.append(document.diagnostic((*where, "plugin", "name"), message))
    return problems
