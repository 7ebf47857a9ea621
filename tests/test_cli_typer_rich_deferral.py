"""Typer's help formatter loads without `rich.markdown` and `rich.traceback`, and anything that
does use them (Markdown help, a Rich traceback, any later import) gets the real ones.

Each case runs in a fresh interpreter: the test worker has long imported Typer's formatter."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import typer

from headway.cli import typer_rich_deferral

_MARKDOWN_APP = """
import sys
import typer
if sys.argv[1] == "deferred":
    from headway.cli import typer_rich_deferral
    typer_rich_deferral.install()
app = typer.Typer(rich_markup_mode="markdown")
@app.command()
def hello(name: str = typer.Option("x", help="The **name** to greet :wave:.")) -> None:
    '''Say *hello*, with `code` and :smile: (no link: its id is random).

    - one
    - two
    '''
sys.argv = ["hello", "--help"]
app()
"""

_PROBE = """
import json, sys
from headway.cli import typer_rich_deferral
typer_rich_deferral.install()
import typer.rich_utils as formatter
from typer.models import DeveloperExceptionConfig
first = {name: name in sys.modules for name in ("rich.markdown", "rich.traceback")}
stand_in = type(formatter.Markdown).__name__
text = formatter._make_rich_text(text="**bold**", markup_mode="markdown")
import rich.markdown
try:
    raise ValueError("boom")
except ValueError as error:
    traceback = formatter.get_traceback(error, DeveloperExceptionConfig(), [])
import rich.traceback
print(json.dumps({
    "loaded_with": first,
    "stand_in": stand_in,
    "markdown_is_real": type(text) is rich.markdown.Markdown,
    "isinstance_forwards": isinstance(text, formatter.Markdown),
    "later_import_is_real": rich.markdown.Markdown.__module__ == "rich.markdown"
        and type(rich.markdown.Markdown) is type,
    "traceback_is_real": type(traceback) is rich.traceback.Traceback,
}))
"""


def _run(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80", "FORCE_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_formatter_loads_with_stand_ins_that_build_the_real_objects() -> None:
    found = json.loads(_run(_PROBE))
    assert found == {
        "loaded_with": {"rich.markdown": False, "rich.traceback": False},
        "stand_in": "Deferred",
        "markdown_is_real": True,
        "isinstance_forwards": True,
        "later_import_is_real": True,
        "traceback_is_real": True,
    }


def test_markdown_help_reads_the_same_through_the_stand_ins() -> None:
    stock = _run(_MARKDOWN_APP, "stock")
    deferred = _run(_MARKDOWN_APP, "deferred")
    assert "\x1b[1m" in stock and "hello" in stock  # styled Markdown, really rendered
    assert deferred == stock


def test_typer_imports_no_other_name_from_the_deferred_modules() -> None:
    """A Typer upgrade that imports another name from them fails here, not in a user's help."""
    source = Path(typer.__file__).with_name("rich_utils.py").read_text()
    imported: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in typer_rich_deferral.DEFERRED_NAMES:
            imported[node.module] = (*imported.get(node.module, ()), *(a.name for a in node.names))
    assert imported == typer_rich_deferral.DEFERRED_NAMES
