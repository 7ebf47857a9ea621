"""Every command's help reads as paragraphs at any terminal width.

Typer's Rich help keeps the line breaks of a docstring's later paragraphs, so a paragraph
wrapped at the source's width came out ragged elsewhere (`headway diff --help` at 60 columns).
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from typing import Any

import typer.main

from headway.cli import main as cli_main
from headway.cli.help_paragraphs import laid_out, reflowed


def _commands(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name in sorted(getattr(command, "commands", {})):
        sub = command.commands[name]
        found.append(((*prefix, name), sub))
        found.extend(_commands(sub, (*prefix, name)))
    return found


def _ragged(help_text: str) -> list[str]:
    """The later paragraphs Typer would print with their source line breaks."""
    later = inspect.cleandoc(help_text).partition("\f")[0].split("\n\n")[1:]
    return [p for p in later if "\n" in p and not laid_out(p)]


def test_no_command_help_keeps_a_prose_paragraphs_line_breaks() -> None:
    cli_main._register_all()
    commands = _commands(typer.main.get_command(cli_main.app))
    assert len(commands) > 50  # the walk reached every group's commands
    ragged = {" ".join(path): _ragged(c.help or "") for path, c in commands}
    assert {path: found for path, found in ragged.items() if found} == {}


def test_diff_help_wraps_its_paragraphs_at_the_terminal_width() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "headway", "diff", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "60"},
        check=True,
    )
    lines = [line.strip() for line in done.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Resources are compared"))
    paragraph = lines[start : lines.index("", start)]
    # Filled lines: only the paragraph's last line may end well short of the width.
    assert all(len(line) > 35 for line in paragraph[:-1]), paragraph


def test_reflowed_joins_prose_and_keeps_what_is_laid_out() -> None:
    doc = """Summary line
    still the summary.

    Prose wrapped
    at the source's width.

    - a list item
    - another

    \b
    kept
    as is
    """
    assert reflowed(doc) == (
        "Summary line still the summary.\n\nProse wrapped at the source's width.\n\n"
        "- a list item\n- another\n\n\b\nkept\nas is"
    )
