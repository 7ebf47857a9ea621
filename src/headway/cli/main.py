"""The `headway` command: one Typer app with a sub-command module per concern.

Each module in this package exposes `register(app)`, which adds its commands. Keeping
registration explicit (no plugin discovery) makes `--help` and the docs easy to keep true.
"""

from __future__ import annotations

import typer

import headway

app = typer.Typer(
    name="headway",
    help=(
        "Headway: GitOps sync and progressive delivery in one program. Reads Argo CD and "
        "Argo Rollouts manifests unchanged, and is stricter wherever they let an outage through."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"headway {headway.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Headway: GitOps sync and progressive delivery in one program."""


_registered = False


def _register_all() -> None:
    """Add every command to `app`, once (tests and `main()` may both call this)."""
    # Each sub-command module registers itself; the list is the CLI's table of contents.
    global _registered  # noqa: PLW0603 - a process-wide "done" flag is the whole point
    if _registered:
        return
    from headway.cli import commands

    for module in commands.MODULES:
        module.register(app)
    _registered = True


def main() -> None:
    try:
        # Importing every command takes a moment; a Ctrl-C then must not print a traceback.
        # (Typer itself turns a Ctrl-C inside a command into exit status 130.)
        _register_all()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    app()
