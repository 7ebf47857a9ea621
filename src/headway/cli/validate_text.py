"""How `headway validate` prints a report, as text or JSON, without Typer.

Both ways a `validate` call runs share it: the Typer command (`cli/validate.py`) and the
direct path of `cli/entry.py`, which answers `headway validate PATH...` without building the
Typer app. Coloured on a terminal, plain text to a pipe or file (`cli/text_lines.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from headway.cli.text_lines import Line, print_lines
from headway.model.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:  # the model and the sources load when there is something to validate
    from headway.model.validate import ValidationReport

__all__ = [
    "EXIT_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "exit_status",
    "json_report",
    "print_text",
    "summary_line",
    "text_lines",
]

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2

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


def json_report(report: ValidationReport) -> str:
    """The diagnostics as a JSON array (ASCII only: `json.dumps` escapes the rest)."""
    import json

    return json.dumps([d.to_json() for d in report.diagnostics], indent=2)


def print_text(report: ValidationReport) -> None:
    print_lines(text_lines(report))


def exit_status(report: ValidationReport) -> int:
    return EXIT_OK if report.ok else EXIT_ERRORS
