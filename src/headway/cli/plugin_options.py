"""`--plugins-dir` and `--plugin-timeout`, shared by the commands that render sources
(serve, check, diff, validate): where the admin's config management plugins live."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # the plugin loader (and YAML) load when a command runs, not for --help
    from headway.source.plugins import PluginCatalog

__all__ = [
    "DEFAULT_PLUGIN_TIMEOUT_SECONDS",
    "PluginTimeoutOption",
    "PluginsDirOption",
    "load_catalog",
]

# `headway.source.plugins.DEFAULT_TIMEOUT_SECONDS` (Argo CD's 90 s), kept here so that a
# command's --help does not import the plugin loader; a test holds the two equal.
DEFAULT_PLUGIN_TIMEOUT_SECONDS = 90.0

PluginsDirOption = Annotated[
    Path | None,
    typer.Option(
        "--plugins-dir",
        help="Config management plugins: a directory of <name>/plugin.yaml files "
        "(Argo CD's sidecar ConfigManagementPlugin format), run as local processes.",
    ),
]
PluginTimeoutOption = Annotated[
    float,
    typer.Option(
        "--plugin-timeout",
        min=1.0,
        help="Seconds a plugin's init and generate may take together (Argo CD's default).",
    ),
]


def load_catalog(
    directory: Path | None,
    *,
    timeout_seconds: float = DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    required: bool = True,
) -> PluginCatalog:
    """The plugins in `directory` (none without one); a bad file, or a `required` directory
    that is missing, exits with status 2."""
    from headway.source.plugins import PluginCatalog, PluginConfigError, load_plugins

    if directory is None:
        return PluginCatalog(timeout_seconds=timeout_seconds)
    if required and not directory.is_dir():
        typer.echo(f"error: --plugins-dir {directory} is not a directory", err=True)
        raise typer.Exit(2)
    try:
        return load_plugins(directory, timeout_seconds=timeout_seconds)
    except PluginConfigError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
