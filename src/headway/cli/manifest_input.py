"""Reading a manifest file named on the command line, for commands that take one.

A missing or unreadable file and a YAML problem are usage errors (exit 2) that name the file
and, for YAML, the line — never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the YAML reader loads when a file is read, not for --help
    from headway.model.yamlload import Document

EXIT_USAGE = 2


def usage_error(message: str) -> typer.Exit:
    """Print `error: MESSAGE` to stderr and return the exit to raise (status 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def read_documents(path: Path) -> list[Document]:
    """Every YAML document of `path`, or a usage error naming the file (and line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise usage_error(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise usage_error(f"cannot read {path}: {err}") from None
    from headway.model.yamlload import load_documents

    loaded = load_documents(text, str(path))
    if loaded.diagnostics:
        raise usage_error("\n".join(str(d) for d in loaded.diagnostics))
    return loaded.documents
