"""The `headway` entry point: commands load lazily from the table in `cli/commands.py`, the
table matches what the modules register, and a Ctrl-C while a command loads exits 130 quietly."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer
import typer.main

from headway.cli import commands
from headway.cli import main as cli_main
from import_probe import run_headway

cli_main._register_all()


def _no_options() -> None:
    """(a callback keeps Typer from collapsing a one-command app into that command)"""


def test_ctrl_c_while_loading_commands_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(entry: commands.CommandEntry) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "module_of", interrupted)
    monkeypatch.setattr(sys, "argv", ["headway", "demo", "--help"])
    fresh = typer.Typer(cls=cli_main.LazyRootGroup)  # `app` already holds every command here
    fresh.callback()(_no_options)
    monkeypatch.setattr(cli_main, "app", fresh)
    with pytest.raises(SystemExit) as exited:
        cli_main.main()
    assert exited.value.code == 130
    assert "Traceback" not in capsys.readouterr().err


def _command(path: list[str]) -> Any:
    command: Any = typer.main.get_command(cli_main.app)
    for name in path:
        command = command.commands[name]  # Typer bundles its own click: duck-typed
    return command


@pytest.mark.parametrize(
    "path",
    [
        ["get"],
        ["describe"],
        ["logs"],
        ["apply"],
        ["delete"],
        ["rollouts", "list"],
        ["rollouts", "get"],
        ["rollouts", "undo"],
        ["rollouts", "promote"],
        ["rollouts", "abort"],
        ["rollouts", "retry"],
        ["rollouts", "pause"],
        ["rollouts", "restart"],
        ["rollouts", "set", "image"],
        ["rollouts", "status"],
        ["app", "create"],
        ["app", "set"],
        ["app", "delete"],
        ["app", "wait"],
        ["app", "manifests"],
    ],
)
def test_every_option_and_argument_of_the_object_commands_says_what_it_is(
    path: list[str],
) -> None:
    undocumented = [
        p.name
        for p in _command(path).params
        if not (getattr(p, "help", None) or "").strip() and p.name not in ("help",)
    ]
    assert undocumented == [], f"headway {' '.join(path)}: no help for {undocumented}"


def test_registering_twice_adds_each_command_once() -> None:
    from headway.cli.main import _register_all, app

    _register_all()
    _register_all()
    names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert names and len(names) == len(set(names)), names


def _registered_by_modules() -> dict[str, tuple[str, str]]:
    """Every top-level command the modules register: name -> (module, summary)."""
    found: dict[str, tuple[str, str]] = {}
    for module in commands.modules():
        scratch = typer.Typer()
        scratch.callback()(_no_options)
        module.register(scratch)
        group: Any = typer.main.get_command(scratch)
        for name, command in group.commands.items():
            found[name] = (module.__name__, command.get_short_help_str(limit=300))
    return found


def test_the_command_table_lists_exactly_what_the_modules_register() -> None:
    table = {e.name: (e.module, e.summary) for e in commands.COMMANDS}
    assert table == _registered_by_modules()


@pytest.mark.parametrize("entry", commands.COMMANDS, ids=lambda e: e.name)
def test_a_lazily_loaded_command_is_the_registered_one(entry: commands.CommandEntry) -> None:
    group: Any = typer.main.get_command(cli_main.app)
    lazy: Any = cli_main._load(entry, typer.Context(group))
    eager = group.commands[entry.name]
    assert lazy is not None
    assert [p.name for p in lazy.params] == [p.name for p in eager.params]
    assert sorted(getattr(lazy, "commands", {})) == sorted(getattr(eager, "commands", {}))


_HEAVY = ("headway.controllers", "headway.cluster", "headway.expr", "headway.source", "pygit2")


def _modules_imported_by(*args: str) -> list[str]:
    """Which modules `headway ARGS...` imports, in a fresh interpreter."""
    return sorted(run_headway(*args, env={"COLUMNS": "100"}).modules)


def test_help_imports_no_command_module() -> None:
    imported = _modules_imported_by("--help")
    assert [m for m in imported if m.startswith(_HEAVY)] == []
    assert [
        m
        for m in imported
        if m.startswith("headway.cli.")
        and m
        not in (
            "headway.cli.entry",
            "headway.cli.main",
            "headway.cli.commands",
            "headway.cli.typer_rich_deferral",
            "headway.cli.help_cache",
            "headway.cli.quick_exit",  # standard library only; `entry.run` loads it anyway
            "headway.cli.yaml_reader",  # only with HEADWAY_YAML_* set, as the test suite sets
        )
    ] == []


def test_a_command_imports_its_own_module_and_not_the_others() -> None:
    imported = _modules_imported_by("runtime", "--help")
    assert "headway.cli.runtime" in imported
    others = {e.module for e in commands.COMMANDS} - {"headway.cli.runtime"}
    assert sorted(others & set(imported)) == []


def test_app_help_loads_no_operation_model_git_or_controller() -> None:
    """`headway app list --help` costs what `headway --help` costs: the steering module (and
    the operation model, Git and the convergence controllers it brings) loads only in the
    commands that steer an Application."""
    imported = _modules_imported_by("app", "list", "--help")
    assert "headway.cli.app" in imported
    heavy = ("headway.steering", "headway.sync", "headway.model.application", "pygit2")
    assert [m for m in imported if m.startswith(heavy)] == []
    assert [
        m
        for m in imported
        if m.startswith("headway.controllers.")
        and m
        not in (
            "headway.controllers.app",
            "headway.controllers.app.names",
        )
    ] == []


_REDACTION_PROBE = """
import logging, sys
from headway.cli import main
sys.argv = ["headway", *sys.argv[1:]]
try:
    main.main()
except SystemExit:
    pass
print(getattr(logging.getLogRecordFactory(), "headway_redacts", False), file=sys.stderr)
"""


def test_a_command_runs_with_log_redaction_installed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _REDACTION_PROBE, "validate", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stderr.strip().splitlines()[-1] == "True"


def test_version_imports_no_logging() -> None:
    """`--version` runs no command, so it skips the redaction module and `logging`."""
    imported = _modules_imported_by("--version")
    assert [m for m in imported if m == "logging" or m.startswith("headway.redaction")] == []
