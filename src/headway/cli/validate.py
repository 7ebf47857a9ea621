"""`headway validate PATH...`: check manifests before anything is applied.

Exit status: 0 when there is no error (warnings allowed), 1 when any error, 2 for bad usage
(no path, a path that does not exist, an unknown format).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli.plugin_options import load_catalog
from headway.cli.text_lines import Line, print_lines
from headway.model.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:  # the model and the sources load when there is something to validate
    from headway.model.validate import ValidationReport

__all__ = ["register", "summary_line", "text_lines"]

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def summary_line(report: ValidationReport) -> str:
    """`3 files, 12 objects: 1 error, 2 warnings`, then what was left unread, if anything:
    `(1 Helm chart skipped, 1 Jsonnet file left to check)`."""
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    notes = [d for d in report.diagnostics if d.severity is Severity.INFO]
    jsonnet = sum(1 for d in notes if d.message.startswith("not evaluated:"))
    charts = len(notes) - jsonnet
    left = [_plural(charts, "Helm chart") + " skipped"] if charts else []
    if jsonnet:
        left.append(_plural(jsonnet, "Jsonnet file") + " left to check")
    return (
        f"{_plural(report.files, 'file')}, {_plural(report.objects, 'object')}: "
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
        + (f" ({', '.join(left)})" if left else "")
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def text_lines(report: ValidationReport) -> list[Line]:
    """The text report: a line per diagnostic, then the summary (wrapped as Rich wraps)."""
    lines = [_styled(diagnostic) for diagnostic in report.diagnostics]
    lines.append(Line.of(summary_line(report), soft_wrap=False))
    return lines


def _styled(diagnostic: Diagnostic) -> Line:
    """The diagnostic's own text, with the location dimmed and the severity coloured."""
    text = str(diagnostic)
    style = _STYLE.get(diagnostic.severity, "")
    line = f":{diagnostic.line}" if diagnostic.line > 0 else ""  # as `Diagnostic.__str__`
    where = f"{diagnostic.file}{line}:"
    if not style or not text.startswith(where):
        return Line.of(text)
    return Line(((where, "dim"), (text[len(where) :], style)))


def _print_json(report: ValidationReport) -> None:
    typer.echo(json.dumps([d.to_json() for d in report.diagnostics], indent=2))


def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Manifest files or directories (searched for .yaml/.yml and .jsonnet files).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--format", "-o", help="text (one line per problem) or json.")
    ] = OutputFormat.TEXT,
    plugins_dir: Annotated[
        Path | None,
        typer.Option(
            "--plugins-dir",
            help="The config management plugins serve runs (<name>/plugin.yaml): each file is "
            "checked, and an Application naming none of them is an error. Nothing is run.",
        ),
    ] = None,
) -> None:
    """Check Argo CD / Argo Rollouts manifests: types, required fields, durations, enums,
    Argo's rules, and what Headway does not run yet. ApplicationSets are rendered and their
    Applications checked too. Helm charts are skipped (and said). Jsonnet files are
    evaluated on their own. With --plugins-dir, its plugin.yaml files are checked and an
    Application naming a plugin that is not there is an error."""
    if not paths:
        typer.echo("error: give at least one file or directory to validate", err=True)
        raise typer.Exit(EXIT_USAGE)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        typer.echo(f"error: no such file or directory: {', '.join(missing)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    from headway.source.manifest_files import check_paths

    plugins = load_catalog(plugins_dir) if plugins_dir is not None else None
    report = check_paths(paths, plugins=plugins)
    if output is OutputFormat.JSON:
        _print_json(report)
    else:
        # Coloured on a terminal; plain text to a pipe or file (`text_lines`).
        print_lines(text_lines(report))
    raise typer.Exit(EXIT_OK if report.ok else EXIT_ERRORS)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
