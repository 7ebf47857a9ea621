"""What the CLI prints for help and usage errors is what stock Typer prints for the same
commands, whatever the entry point does to start faster (load one command module, build one
command, defer Rich modules help never uses).

Differential, not a snapshot: the same command lines are rendered twice, each mode in a fresh
interpreter. "stock" imports Typer's Rich help formatter before Headway (nothing deferred),
registers every command eagerly and runs Typer's app; "entry" runs `entry.main()` as the
`headway` script does. Both outputs, exit statuses and streams must match byte for byte, in
plain text at one width and with forced colour (ANSI styles) at another.

The root's own listing is Headway's (the summaries of the table in `cli/commands.py`, which
`test_cli_main` checks against what the modules register), so "stock" renders the lines that
name no command before it registers any.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from headway.cli import main as cli_main

_RENDER = """
import contextlib, io, json, sys
mode, lines = sys.argv[1], json.load(sys.stdin)
if mode == "stock":
    import typer.rich_utils  # Typer's own imports, before Headway could defer any of them
from headway.cli import commands, entry, main
run = main.app if mode == "stock" else entry.main
rendered = {}
names_no_command = [line for line in lines if not line or line[0] not in commands.BY_NAME]
names_a_command = [line for line in lines if line and line[0] in commands.BY_NAME]
for line in names_no_command + names_a_command:
    if mode == "stock" and line in names_a_command:
        main._register_all()
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = ["headway", *line]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run()
        except SystemExit as exit:
            code = exit.code
    rendered[json.dumps(line)] = {
        "line": line, "code": code, "out": out.getvalue(), "err": err.getvalue()
    }
print(json.dumps([rendered[json.dumps(line)] for line in lines]))
"""


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group below `command`, as the words that name it."""
    found: list[tuple[str, ...]] = []
    for name in sorted(getattr(command, "commands", {})):
        path = (*prefix, name)
        found.append(path)
        found.extend(_paths(command.commands[name], path))
    return found


def _lines() -> list[list[str]]:
    cli_main._register_all()
    root: Any = typer.main.get_command(cli_main.app)
    lines: list[list[str]] = [[], ["--help"], ["--version"], ["--no-such-option"]]
    lines += [["apps"], ["app", "lst"], ["rollouts", "set", "img"]]  # typos, suggestions
    lines += [["rollouts", "get"], ["app", "get"], ["describe"]]  # a missing argument
    for path in _paths(root):
        lines += [[*path, "--help"], [*path, "--no-such-option"]]
        if hasattr(_command_at(root, path), "commands"):
            lines.append(list(path))  # a group alone prints its help
    return lines


def _command_at(root: Any, path: tuple[str, ...]) -> Any:
    command = root
    for name in path:
        command = command.commands[name]
    return command


def _render(mode: str, lines: list[list[str]], env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", _RENDER, mode],
        input=json.dumps(lines),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rendered: list[dict[str, Any]] = json.loads(done.stdout)
    return rendered


@pytest.mark.parametrize(
    "env",
    [{"COLUMNS": "100"}, {"COLUMNS": "72", "FORCE_COLOR": "1"}],
    ids=["plain-100", "colour-72"],
)
def test_every_help_and_usage_error_reads_as_stock_typer_renders_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The entry point twice with one cache directory: the first run renders each help
    through Typer and keeps it (`cli/help_cache.py`), the second prints the kept screens."""
    lines = _lines()
    stock = _render("stock", lines, env)
    kept = tmp_path / "cache"
    entry_env = {**env, "XDG_CACHE_HOME": str(kept)}
    first = _render("entry", lines, entry_env)
    screens = sorted((kept / "headway" / "help").iterdir())
    second = _render("entry", lines, entry_env)
    assert len(screens) > 60  # every command's and group's help was kept
    assert sorted((kept / "headway" / "help").iterdir()) == screens  # ... and found again
    assert len(stock) == len(first) == len(second) == len(lines)
    for before, after, again in zip(stock, first, second, strict=True):
        assert after == before, " ".join(before["line"])
        assert again == before, " ".join(before["line"])


def test_the_comparison_covers_help_usage_errors_and_every_command() -> None:
    """Guards the differential test against comparing nothing: the lines it renders include
    each kind of output, and the stock rendering of them is real help and real errors."""
    lines = _lines()
    rendered = _render("stock", lines, {"COLUMNS": "100"})
    by_line = {" ".join(r["line"]): r for r in rendered}
    assert "Usage" in by_line["--help"]["out"]
    assert "rollouts" in by_line["--help"]["out"]
    assert "--state-dir" in by_line["rollouts set image --help"]["out"]
    assert by_line["check --no-such-option"]["code"] == 2
    assert "No such option" in by_line["check --no-such-option"]["err"]
    assert "Did you mean" in by_line["apps"]["err"]
    assert "Missing argument" in by_line["rollouts get"]["err"]
    assert len(lines) > 120  # 141 when written
