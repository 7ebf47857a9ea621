"""A module's commands are built only as far as a call needs them, and read and run as Typer's
eager build of the same registrations does."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
import typer
import typer.main
from typer.core import TyperGroup

from headway.cli import lazy_groups


def _invoke(command: Any, args: list[str], prog_name: str) -> tuple[int | str | None, str]:
    """Run a Click command as its script would: exit status, and stdout and stderr together."""
    output = io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            command.main(args, prog_name=prog_name)
        except SystemExit as exit:
            code = exit.code
    return code, output.getvalue()


def _registrations() -> typer.Typer:
    """A module's worth of registrations with every listing feature Typer has."""
    app = typer.Typer()
    things = typer.Typer(help="Things and their parts.", no_args_is_help=True, epilog="See also.")
    parts = typer.Typer(help="Parts of a thing.")

    @things.callback()
    def _things(verbose: bool = typer.Option(False, "--verbose", help="Say more.")) -> None:
        """Things and their parts (from the callback)."""
        if verbose:
            typer.echo("verbose")

    @things.command("list")
    def list_things(limit: int = typer.Option(10, "--limit", min=1, help="At most this many.")):
        """List things.

        Longer text that only `things list --help` shows."""
        typer.echo(f"listing {limit}")

    @things.command("show", short_help="Show one thing.", rich_help_panel="Looking")
    def show(name: str = typer.Argument(..., help="The thing.")) -> None:
        typer.echo(f"showing {name}")

    @things.command(help="Remove a thing (help given, not the docstring).", deprecated=True)
    def remove_thing(name: str) -> None:
        """Not this."""

    @things.command("secret", hidden=True)
    def secret() -> None:
        """Hidden."""

    @parts.command("count")
    def count(kind: str = typer.Option("all", "--kind", help="Which parts.")) -> None:
        """Count parts."""
        typer.echo(f"counting {kind}")

    @app.command("hello")
    def hello(loud: bool = typer.Option(False, "--loud", help="Shout.")) -> None:
        """Say hello."""
        typer.echo("HELLO" if loud else "hello")

    things.add_typer(parts, name="parts")
    app.add_typer(things, name="things")
    return app


def _eager(app: typer.Typer, name: str) -> Any:
    group: Any = typer.main.get_group(app)
    return group.commands[name]


LINES = [
    ["things", "--help"],
    ["things"],
    ["things", "list", "--help"],
    ["things", "show", "--help"],
    ["things", "remove-thing", "--help"],
    ["things", "parts", "--help"],
    ["things", "parts", "count", "--help"],
    ["things", "list", "--limit", "3"],
    ["things", "--verbose", "show", "box"],
    ["things", "list", "--limit", "0"],
    ["things", "lst"],
    ["things", "parts", "count", "--kind", "bolts"],
    ["things", "show"],
    ["hello", "--help"],
    ["hello", "--loud"],
]


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_a_lazily_built_command_reads_and_runs_as_typers_eager_build(line: list[str]) -> None:
    app = _registrations()
    eager = _invoke(_eager(app, line[0]), line[1:], prog_name=line[0])
    lazy_command = lazy_groups.build_named(app, line[0])
    assert lazy_command is not None
    lazy = _invoke(lazy_command, line[1:], prog_name=line[0])
    assert lazy == eager
    assert lazy[1].strip()


def _with_a_sub_command_that_cannot_be_built() -> typer.Typer:
    app = _registrations()
    things = app.registered_groups[0].typer_instance
    assert things is not None

    @things.command("broken")
    def broken(value: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Its annotation names nothing: Typer cannot build its options."""

    return app


def test_a_group_lists_and_runs_sub_commands_without_building_the_others() -> None:
    with pytest.raises(NameError):  # Typer's eager build reads every sub-command's hints
        typer.main.get_group(_with_a_sub_command_that_cannot_be_built())
    group = lazy_groups.build_named(_with_a_sub_command_that_cannot_be_built(), "things")
    assert isinstance(group, lazy_groups.LazyTyperGroup)
    code, listed = _invoke(group, ["--help"], prog_name="things")
    assert code == 0, listed
    assert "broken" in listed and "Its annotation names nothing" in listed
    assert _invoke(group, ["list", "--limit", "2"], prog_name="things") == (0, "listing 2\n")
    with pytest.raises(NameError):
        _invoke(group, ["broken", "--help"], prog_name="things")


def test_only_the_named_command_of_a_module_is_built() -> None:
    app = _with_a_sub_command_that_cannot_be_built()
    hello = lazy_groups.build_named(app, "hello")
    assert hello is not None and [p.name for p in hello.params] == ["loud"]
    assert lazy_groups.build_named(app, "nothing") is None


def test_a_group_with_its_own_class_is_built_eagerly_as_it_asks() -> None:
    class Custom(TyperGroup):
        pass

    app = typer.Typer()
    own = typer.Typer(cls=Custom)
    own.command("one")(lambda: None)
    own.command("two")(lambda: None)
    app.add_typer(own, name="own")
    group = lazy_groups.build_named(app, "own")
    assert type(group) is Custom
    assert sorted(group.commands) == ["one", "two"]
