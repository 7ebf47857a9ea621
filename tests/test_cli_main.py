"""The `headway` entry point: a Ctrl-C while the commands are imported exits 130 quietly."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from headway.cli import main as cli_main

cli_main._register_all()


def test_ctrl_c_while_loading_commands_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "_register_all", interrupted)
    with pytest.raises(SystemExit) as exited:
        cli_main.main()
    assert exited.value.code == 130
    assert exited.value.__suppress_context__  # no "During handling of..." chain either


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
