"""Printing a command's text report: through Rich on a terminal, as plain text elsewhere.

`headway validate` and `headway check` print one line per problem, coloured on a terminal.
Piped into a file, a CI log or a pre-commit hook (where they run most), Rich prints the same
lines without colour, and importing it is a fifth of `validate`'s start-up. So a report is a
list of `Line`s, each a run of (text, style) pieces, and `print_lines` writes the plain text
itself whenever Rich would have printed exactly that text: output is not a
terminal by Rich's own test (`TTY_COMPATIBLE`, `FORCE_COLOR`, `isatty`), and no line holds
what Rich rewrites (tabs, control characters, or a wrapped line wider than the console).
Otherwise every line goes through Rich, so the two never mix in one report.

A line reaches Rich as a `Text` built from its pieces, never as markup, and with emoji codes
off: read as markup, `file.yaml:100:` printed as `file.yaml💯` (the `:100:` emoji), so a
problem on line 100 lost its line number, and text holding `[name]` or backslashes needed
escaping that Rich's versions read differently (Rich 15 turns any `\\[` into `[`; the escaping
this module did until session 12 followed Rich 13 and printed a path's `\\[` as `[`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["Line", "plain_width", "print_lines", "prints_plain"]

_DEFAULT_WIDTH = 80  # Rich's width when no stream is a terminal and COLUMNS is unset
_REWRITTEN = frozenset(chr(c) for c in range(32) if c != 10) | {"\x7f"}


@dataclass(frozen=True, slots=True)
class Line:
    """One printed line: its pieces of text, each with a Rich style ("" for none) that
    colours it on a terminal. `soft_wrap=False` lets Rich wrap it at the console's width."""

    pieces: tuple[tuple[str, str], ...]
    soft_wrap: bool = True

    @classmethod
    def of(cls, text: str, style: str = "", *, soft_wrap: bool = True) -> Line:
        return cls(((text, style),), soft_wrap)

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def rich_text(self) -> Text:
        """The line as a Rich `Text`, styled piece by piece (never read as markup: a
        path or message holding `[name]` or a backslash prints as written)."""
        from rich.text import Text

        return Text.assemble(*self.pieces)


def print_lines(lines: Sequence[Line], *, stream: TextIO | None = None) -> None:
    """Print `lines` to `stream` (standard output when None), as Rich would."""
    out: TextIO | None = sys.stdout if stream is None else stream
    if out is None:
        return  # the process started with its output closed (`>&-`): Rich writes nowhere
    if prints_plain(out, os.environ) and _all_plain(lines, plain_width(os.environ)):
        out.write("".join(f"{line.plain}\n" for line in lines))
        out.flush()
        return
    from rich.console import Console

    console = Console(file=out, highlight=False, emoji=False)
    for line in lines:
        console.print(line.rich_text(), soft_wrap=line.soft_wrap, highlight=False, emoji=False)


def prints_plain(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether Rich would treat `stream` as no terminal (and so print no colour): the order
    of Rich's `Console.is_terminal` (TTY_COMPATIBLE, then FORCE_COLOR, then isatty)."""
    tty_compatible = environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "0"
    force_color = environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color == ""
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is None or not isatty()
    except ValueError:  # a closed stream
        return True


def plain_width(environ: Mapping[str, str]) -> int:
    """The width Rich wraps at when printing to no terminal: the first of standard input,
    output and error that is a terminal gives it, COLUMNS overrides, 80 otherwise."""
    width = 0
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or _DEFAULT_WIDTH


def _all_plain(lines: Sequence[Line], width: int) -> bool:
    return all(_prints_unchanged(line, width) for line in lines)


def _prints_unchanged(line: Line, width: int) -> bool:
    """Whether Rich prints `line.plain` exactly (leaving the doubtful cases to Rich)."""
    text = line.plain
    if not _REWRITTEN.isdisjoint(text):  # tabs expanded, control codes stripped
        return False
    if line.soft_wrap:
        return True
    # Wrapped at the width, in cells: only plain ASCII is measured here.
    return text.isascii() and len(text) < width and "\n" not in text and text == text.rstrip()
