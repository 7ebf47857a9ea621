"""`headway validate PATH...`: check manifests before anything is applied.

Exit status: 0 when there is no error (warnings allowed), 1 when any error, 2 for bad usage
(no path, a path that does not exist, an unknown format).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli.plugin_options import load_catalog
from headway.cli.validate_text import (
    EXIT_USAGE,
    exit_status,
    json_report,
    print_text,
    summary_line,
    text_lines,
)

if TYPE_CHECKING:  # the model and the sources load when there is something to validate
    from headway.model.validate import ValidationReport

__all__ = ["register", "summary_line", "text_lines"]


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def _print_json(report: ValidationReport) -> None:
    typer.echo(json_report(report))


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
    missing = [str(p) for p in paths if _unreadable(p) == ""]
    if missing:
        typer.echo(f"error: no such file or directory: {', '.join(missing)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    for path in paths:
        reason = _unreadable(path)
        if reason:
            typer.echo(f"error: cannot read {path}: {reason}", err=True)
            raise typer.Exit(EXIT_USAGE)
    from headway.source.manifest_files import check_paths

    plugins = load_catalog(plugins_dir) if plugins_dir is not None else None
    report = check_paths(paths, plugins=plugins)
    if output is OutputFormat.JSON:
        _print_json(report)
    else:
        print_text(report)
    raise typer.Exit(exit_status(report))


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)


def _unreadable(path: Path) -> str | None:
    """None for a path that exists; "" for one that does not; otherwise why it cannot be
    looked at (a name too long, a loop of links: `Path.exists` raises those)."""
    try:
        path.stat()
    except FileNotFoundError:
        return ""
    except NotADirectoryError:
        return ""
    except OSError as err:
        return err.strerror or str(err)
    return None
