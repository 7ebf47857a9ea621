"""`headway diff BASE..HEAD`: what a change to a GitOps repository does, before it merges.

Offline, from the clone's object database: every Application the change affects, rendered at
both revisions, diffed per resource, with the sync HEAD would start and the check findings
it brings in. Exit status: 0 when nothing renders differently, 1 when something does, 2 on
errors (a bad range or path, or an affected Application that fails to render at HEAD; the
review is still printed then).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli.check import UsageError
from headway.cli.help_paragraphs import one_line_paragraphs
from headway.cli.plugin_options import (
    DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    PluginsDirOption,
    PluginTimeoutOption,
    load_catalog,
)

if TYPE_CHECKING:  # Git, the loader and the review load when a diff runs, not for --help
    from headway.review.model import Review

__all__ = ["EXIT_CHANGES", "EXIT_ERROR", "EXIT_NO_CHANGE", "register"]

EXIT_NO_CHANGE, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2
# The markdown comment's bound, in characters: below GitHub's 65,536 with room for the note.
# Here rather than in `diff_markdown`, which loads the whole review to be imported.
DEFAULT_LIMIT = 60_000


class DiffFormat(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


def exit_status(review: Review) -> int:
    if review.head_errors:
        return EXIT_ERROR
    return EXIT_CHANGES if review.has_changes else EXIT_NO_CHANGE


def diff(  # noqa: PLR0917 (typer maps each parameter to an option)
    revisions: Annotated[
        str, typer.Argument(help="BASE..HEAD (or BASE...HEAD: from where HEAD forked off BASE).")
    ],
    repo: Annotated[
        Path, typer.Option("--repo", help="The clone (or a directory inside it).")
    ] = Path("."),
    output: Annotated[
        DiffFormat, typer.Option("--format", "-o", help="text, markdown or json.")
    ] = DiffFormat.TEXT,
    limit: Annotated[
        int, typer.Option("--max-chars", help="Markdown only: the comment's size bound.")
    ] = DEFAULT_LIMIT,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Check config (default: .headway/check.yaml, else headway-check.yaml)."
        ),
    ] = None,
    plugins_dir: PluginsDirOption = None,
    plugin_timeout: PluginTimeoutOption = DEFAULT_PLUGIN_TIMEOUT_SECONDS,
) -> None:
    """Render every Application a change affects at both revisions and show the difference.

    Resources are compared as the controller will compare them after the merge: with the
    HEAD Application's ignoreDifferences and the repository's argocd-cm system-wide rules
    and resource.compareoptions at HEAD (the compare-options annotation concerns live
    objects only, so it changes nothing between two renders)."""
    from headway.cli.diff_load import load_review, parse_range
    from headway.cli.diff_markdown import render_markdown
    from headway.cli.diff_report import render_json, render_text

    plugins = load_catalog(plugins_dir, timeout_seconds=plugin_timeout)
    try:
        review = load_review(repo, parse_range(revisions), config_file=config_file, plugins=plugins)
    except UsageError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(EXIT_ERROR) from None
    if output is DiffFormat.JSON:
        typer.echo(render_json(review), nl=False)
    elif output is DiffFormat.MARKDOWN:
        typer.echo(render_markdown(review, limit=limit), nl=False)
    else:
        typer.echo(render_text(review), nl=False)
    raise typer.Exit(exit_status(review))


def register(app: typer.Typer) -> None:
    app.command("diff")(one_line_paragraphs(diff))
