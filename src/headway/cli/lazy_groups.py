"""Click commands built from a module's Typer registrations only as far as one call needs.

Typer turns a whole application into Click commands at once: for every command it reads the
function's signature and type hints and builds each option, which for a group like `headway
app` (13 sub-commands, about 120 options) costs more than the module's import. A call runs
one command, and a group's help lists its sub-commands by name and summary only.

`build_named` builds just the command or group a call names. A group is a `LazyTyperGroup`:
Typer builds the group itself (its own options, help and settings) with no sub-commands, and
each sub-command is built in full the first time it is looked up. Until then, the group's
help lists it from a copy of its registration without parameters, which Typer turns into a
command with the same name, help, summary, panel and flags: the listing reads as Typer's own
(`tests/test_cli_help_unchanged.py` compares every help screen with Typer's eager build).
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass

import typer.main
from typer import _click as click
from typer.core import MarkupMode, TyperGroup
from typer.models import CommandInfo, TyperInfo


@dataclass(frozen=True)
class BuildSettings:
    """The Typer application's settings that reach every command it builds."""

    pretty_exceptions_short: bool
    suggest_commands: bool
    rich_markup_mode: MarkupMode

    @classmethod
    def of(cls, app: typer.Typer) -> BuildSettings:
        return cls(
            pretty_exceptions_short=app.pretty_exceptions_short,
            suggest_commands=app.suggest_commands,
            rich_markup_mode=app.rich_markup_mode,
        )


def build_named(app: typer.Typer, name: str) -> click.Command | None:
    """The command or group `app` registers under `name`, built alone (None if none is)."""
    settings = BuildSettings.of(app)
    found: click.Command | None = None
    for info in app.registered_commands:
        if command_name(info) == name:
            found = _full_command(info, settings)
    for group_info in app.registered_groups:
        group = build_group(group_info, settings)
        if group.name == name:
            found = group
    return found  # the last registration of a name wins, as in Typer


def command_name(info: CommandInfo) -> str:
    assert info.callback is not None, "a Typer command has a callback"
    return info.name or typer.main.get_command_name(info.callback.__name__)


def build_group(group_info: TyperInfo, settings: BuildSettings) -> TyperGroup:
    """The group `group_info` registers, lazy unless it asks for its own group class."""
    instance = group_info.typer_instance
    assert instance is not None, "add_typer always records the Typer it adds"
    own_class = typer.main.solve_typer_info_defaults(group_info).cls
    if own_class not in (None, TyperGroup) or any(not g.name for g in instance.registered_groups):
        return _eager_group(group_info, settings)  # a custom class, or a nameless merge
    shell = copy.copy(instance)
    shell.registered_commands, shell.registered_groups = [], []
    shell_info = copy.copy(group_info)
    shell_info.typer_instance, shell_info.cls = shell, LazyTyperGroup
    group = _eager_group(shell_info, settings)
    assert isinstance(group, LazyTyperGroup)
    group.defer(instance, settings)
    return group


class LazyTyperGroup(TyperGroup):
    """A group whose sub-commands are built in full when looked up; help lists them cheaply."""

    _unbuilt: dict[str, CommandInfo]
    _settings: BuildSettings
    _listing_help = False

    def defer(self, instance: typer.Typer, settings: BuildSettings) -> None:
        """Take `instance`'s sub-commands as listing copies, in Typer's order and precedence."""
        self._unbuilt, self._settings = {}, settings
        for info in instance.registered_commands:
            name = command_name(info)
            self.commands[name] = _full_command(_without_parameters(info), settings)
            self._unbuilt[name] = info
        for group_info in instance.registered_groups:
            group = build_group(group_info, settings)
            assert group.name, "build_group builds named groups lazily"
            self.commands[group.name] = group
            self._unbuilt.pop(group.name, None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        info = None if self._listing_help else self._unbuilt.pop(cmd_name, None)
        if info is not None:
            self.commands[cmd_name] = _full_command(info, self._settings)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing_help = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing_help = False


def _without_parameters(info: CommandInfo) -> CommandInfo:
    """`info` with a parameterless callback, and the name and help Typer reads off its own."""
    assert info.callback is not None, "a Typer command has a callback"
    listing = copy.copy(info)
    listing.name = command_name(info)
    if info.help is None:
        listing.help = inspect.getdoc(info.callback)
    listing.callback = _listed_only
    return listing


def _listed_only() -> None:
    """(stands in for a sub-command while its group lists it)"""


def _full_command(info: CommandInfo, settings: BuildSettings) -> click.Command:
    return typer.main.get_command_from_info(
        info,
        pretty_exceptions_short=settings.pretty_exceptions_short,
        rich_markup_mode=settings.rich_markup_mode,
    )


def _eager_group(group_info: TyperInfo, settings: BuildSettings) -> TyperGroup:
    return typer.main.get_group_from_info(
        group_info,
        pretty_exceptions_short=settings.pretty_exceptions_short,
        suggest_commands=settings.suggest_commands,
        rich_markup_mode=settings.rich_markup_mode,
    )
