"""Command docstrings as Typer's help should read them: each paragraph on one line.

Typer's Rich help joins the lines of a docstring's first paragraph but keeps the line breaks
of every later one, so a paragraph wrapped at the source's 100 columns came out ragged at any
other terminal width (at 60 columns, `headway diff --help` broke each source line again into
a long and a short one). `one_line_paragraphs` rewrites a command function's docstring so each
prose paragraph is one line, which Rich then wraps at the terminal's width. A paragraph that
is laid out on purpose is kept as written: one that starts with Typer's no-rewrap marker
`\\b`, or one with an indented line or a line starting a list item (`- `, `* `, `1. `).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["laid_out", "one_line_paragraphs", "reflowed"]

_Function = TypeVar("_Function", bound=Callable[..., object])
_LIST_ITEM = re.compile(r"(?:[-*]|\d+[.)])\s")


def laid_out(paragraph: str) -> bool:
    """Whether the paragraph's line breaks are layout to keep (see the module's docstring)."""
    lines = paragraph.split("\n")
    return paragraph.startswith("\b") or any(
        line[:1].isspace() or _LIST_ITEM.match(line) for line in lines
    )


def reflowed(doc: str) -> str:
    """`doc` (cleaned as `inspect.cleandoc` does) with each prose paragraph on one line."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(
        p if laid_out(p) else " ".join(line.strip() for line in p.split("\n"))
        for p in paragraphs
    )


def one_line_paragraphs(function: _Function) -> _Function:
    """Decorator (below `@app.command`): the function's docstring `reflowed` for its help."""
    if function.__doc__:
        function.__doc__ = reflowed(function.__doc__)
    return function
