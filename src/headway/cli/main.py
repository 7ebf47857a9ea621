"""The `headway` command: one Typer app with a sub-command module per concern.

Each module in this package exposes `register(app)`, which adds its commands. Registration
stays explicit (no plugin discovery), listed in `headway.cli.commands`; the root group loads
a command's module only when that command runs, so `headway --help` and cheap commands do
not pay for importing every other command (see `commands.py`).
"""

from __future__ import annotations

import errno
import sys

import typer
from typer import _click as click  # Typer vendors its own click; its classes are these
from typer.core import TyperCommand, TyperGroup

import headway
from headway.cli import commands, typer_rich_deferral

typer_rich_deferral.install()  # before Typer first formats help or an error


class LazyRootGroup(TyperGroup):
    """The root group: commands already registered, else loaded from the table on demand.

    While the root's own help is rendered, a command that is not loaded yet is shown from
    its summary in the table instead of importing its module.
    """

    _listing_help = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        loaded = super().list_commands(ctx)
        return loaded + [entry.name for entry in commands.COMMANDS if entry.name not in loaded]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        entry = commands.BY_NAME.get(cmd_name)
        if command is not None or entry is None:
            return command
        if self._listing_help:
            return TyperCommand(entry.name, help=entry.summary, short_help=entry.summary)
        return _load(entry, ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing_help = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing_help = False

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return self._click_resolve_command(ctx, args)
        except click.exceptions.UsageError as error:
            from difflib import get_close_matches  # only on a typo: keeps start-up lean

            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                names = ", ".join(repr(match) for match in matches)
                error.message = f"{error.message.rstrip('.')}. Did you mean {names}?"
            raise


def _load(entry: commands.CommandEntry, ctx: click.Context) -> click.Command | None:
    """Import the entry's module and build the command it registers under the entry's name
    (alone, and a group's sub-commands only when they are looked up: see `lazy_groups`).

    Every command `main()` runs comes through here, so this is where log redaction is
    installed: before any command code runs, and not for `--help` and `--version`, which log
    nothing and so skip importing `logging`.
    """
    from headway.cli import lazy_groups
    from headway.redaction import install_log_redaction

    install_log_redaction()  # no log line of any command shows credentials in a URL
    scratch = typer.Typer()
    commands.module_of(entry).register(scratch)
    return lazy_groups.build_named(scratch, entry.name)


app = typer.Typer(
    name="headway",
    cls=LazyRootGroup,
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
    """Add every command to `app` eagerly, once (tests and docs tools use the full app).

    `main()` does not need this: the root group loads each command when it runs.
    """
    global _registered  # noqa: PLW0603 - a process-wide "done" flag is the whole point
    if _registered:
        return
    for module in commands.modules():
        module.register(app)
    _registered = True


# An operating-system error about a named file, said in one line with exit status 2 (every
# command's "could not do it" status: 1 means findings or changes for check and diff).
EXIT_OS_ERROR = 2
# What the system refuses about a path whatever the program does: a name too long, a loop of
# links, no permission, a file where a directory must be or the reverse. Any other OSError
# (a file of Headway's own gone missing) is a bug to see with its traceback.
_REFUSED_PATHS = frozenset(
    {errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR}
)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        # A Ctrl-C while a command's modules are still importing must not print a traceback.
        # (Typer itself turns a Ctrl-C inside a command into exit status 130.)
        raise SystemExit(130) from None
    except OSError as err:
        # A path the user gave that the system refuses (a name too long, a loop of links, no
        # permission) reaches here from wherever it was first looked at: one line naming it,
        # not a traceback. Any other error keeps its traceback (`_REFUSED_PATHS`).
        if err.filename is None or err.errno not in _REFUSED_PATHS:
            raise
        sys.stderr.write(f"error: {err.filename}: {err.strerror or err}\n")
        raise SystemExit(EXIT_OS_ERROR) from None
