"""Every command's `--help` and usage error start without importing the heavy parts of
Headway (the store, Git, HTTP clients and servers, the controllers, the model schemas, the
condition language, the drill's numerics): those load inside the functions that do the work.
Nor do they import the Rich modules Typer's help formatter imports but help never uses
(Markdown with markdown-it and Pygments, Rich's traceback and pretty-printer, attrs): see
`cli/typer_rich_deferral.py`.
Structural, not timed: each case runs in a fresh interpreter and reads `sys.modules`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import typer.main

from headway.cli import commands
from headway.cli import main as cli_main

HEAVY = (
    "headway.cluster.local",  # the store and the local runtime
    "headway.controllers.",
    "headway.engine",
    "headway.local_mesh",
    "headway.model.schema",  # every typed kind (Rollout, Application, ...) is built on it
    "headway.expr",
    "headway.drill",
    "pygit2",
    "httpx",
    "starlette",
    "uvicorn",
    "ruamel",
    "numpy",
    "lark",
    "sqlite3",
    "asyncio",  # serve, runtime and analysis run import it when they run
    "ssl",
    "rich.live",  # only `rollouts get --watch` redraws
    # Imported by Typer's formatter at its top, deferred by cli/typer_rich_deferral.py.
    "rich.markdown",
    "markdown_it",
    "pygments",
    "rich.traceback",
    "rich.pretty",
    "attr",
)
# Help and usage errors read no YAML; a command that stops at its first check may have
# loaded the reader already (check's plugin catalog).
YAML = ("yaml", "headway.model.yamlload")
# Name-only modules a command may import to spell its defaults.
LIGHT = frozenset({"headway.controllers.app", "headway.controllers.app.names"})

_PROBE = """
import json, sys
from headway.cli import main
sys.argv = ["headway", *sys.argv[1:]]
code = 0
try:
    main.main()
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _command_lines() -> list[tuple[str, ...]]:
    """Each top-level command, and each sub-command of a command group."""
    cli_main._register_all()
    root: Any = typer.main.get_command(cli_main.app)
    lines: list[tuple[str, ...]] = []
    for entry in commands.COMMANDS:
        lines.append((entry.name,))
        group = root.commands[entry.name]
        lines.extend((entry.name, sub) for sub in sorted(getattr(group, "commands", {})))
    return lines


def _probe(*args: str) -> tuple[int, list[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "100"},
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], report["modules"], done.stdout + done.stderr


def _heavy(modules: list[str], *, reads_yaml: bool = False) -> list[str]:
    heavy = HEAVY if reads_yaml else HEAVY + YAML
    return [m for m in modules if m.startswith(heavy) and m not in LIGHT]


@pytest.mark.parametrize("line", _command_lines(), ids=" ".join)
def test_help_imports_nothing_heavy(line: tuple[str, ...]) -> None:
    code, modules, output = _probe(*line, "--help")
    assert code == 0, output
    assert "Usage" in output
    assert _heavy(modules) == []


@pytest.mark.parametrize("entry", commands.COMMANDS, ids=lambda e: e.name)
def test_a_usage_error_imports_nothing_heavy(entry: commands.CommandEntry) -> None:
    code, modules, output = _probe(entry.name, "--no-such-option")
    assert code == 2, output
    assert "No such option" in output
    assert _heavy(modules) == []


# Commands that stop at their first check (no store, no such path): the answer comes before
# the work's modules load.
_NOTHING_THERE = "/nonexistent/headway-state"
EARLY_EXITS = (
    ("get", "pods", "--state-dir", _NOTHING_THERE),
    ("rollouts", "list", "--state-dir", _NOTHING_THERE),
    ("app", "list", "--state-dir", _NOTHING_THERE),
    ("promotions", "list", "--state-dir", _NOTHING_THERE),
    ("cluster", "list", "--state-dir", _NOTHING_THERE),
    ("check", _NOTHING_THERE),
    ("validate", _NOTHING_THERE),
    ("analysis", "evaluate", _NOTHING_THERE, "--metric", "m", "--value", "1"),
)


@pytest.mark.parametrize("line", EARLY_EXITS, ids=" ".join)
def test_a_command_that_finds_nothing_to_work_on_imports_nothing_heavy(
    line: tuple[str, ...],
) -> None:
    code, modules, output = _probe(*line)
    assert code in (1, 2), output
    assert "error" in output.lower()
    assert _heavy(modules, reads_yaml=True) == []
