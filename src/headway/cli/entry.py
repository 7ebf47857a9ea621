"""The `headway` program's entry point: the console script and `python -m headway`.

Importing Typer (with the Click it vendors) costs more CPU than `headway validate` of a
small repository spends validating, and building the app costs more on top. Two calls whose
outcome Typer does not shape run without it:

- `headway --version`, alone;
- `headway validate PATH...` where every PATH is a plain word (no option, no `--`, not empty)
  naming a file or directory that exists and is readable. For such a line Typer hands the
  paths to the command unchanged (`click.Path(readable=True)`, then `pathlib.Path`), and the
  command validates them and prints the same text (`cli/validate_text.py`).

Everything else goes to the Typer app of `cli/main.py`: any option (`--help`, `--format`,
`--plugins-dir`, a typo), no path, a path that is missing or unreadable (Typer's errors), any
other command, and a shell-completion request. The direct path keeps what Typer's runner does
around a command: log redaction installed first, a Ctrl-C is exit status 130, a closed output
pipe is exit status 1 without a traceback. `tests/test_cli_entry_direct.py` runs a corpus of
command lines both ways and compares output, errors and exit status byte for byte.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["direct_status", "main", "plain_paths"]


def main() -> None:
    try:
        status = direct_status(sys.argv[1:])
    except KeyboardInterrupt:
        # As `cli.main.main` and Typer do: a Ctrl-C, even while modules import, is status 130.
        raise SystemExit(130) from None
    if status is not None:
        raise SystemExit(status)
    from headway.cli.main import main as run_typer_app

    run_typer_app()


def direct_status(args: Sequence[str]) -> int | None:
    """Run `args` without Typer and return the exit status, or None if Typer must run it."""
    if any(name.endswith("_COMPLETE") for name in os.environ):
        return None  # Click's shell completion reads `_<PROGRAM>_COMPLETE` before parsing
    if list(args) == ["--version"]:
        return _guarded(_print_version)
    if args[:1] == ["validate"]:
        paths = plain_paths(args[1:])
        if paths is not None:
            return _guarded(lambda: _validate(paths))
    return None


def plain_paths(words: Sequence[str]) -> list[Path] | None:
    """The paths `validate` gets from `words`, if Typer would pass each on and the command
    would find it; None when Typer must answer (an option, nothing, a missing path)."""
    if not words or any(not word or word.startswith("-") for word in words):
        return None
    if not all(_existing_and_readable(word) for word in words):
        return None
    return [Path(word) for word in words]


def _existing_and_readable(word: str) -> bool:
    """What `click.Path(readable=True)` checks of a path that exists, and what the command
    then checks (`Path.exists()`)."""
    try:
        os.stat(word)
    except OSError:
        return False  # Click passes it on; the command's error is Typer's to print
    return os.access(word, os.R_OK) and Path(word).exists()


def _print_version() -> int:
    import headway

    sys.stdout.write(f"headway {headway.__version__}\n")  # as `typer.echo` writes it
    sys.stdout.flush()
    return 0


def _validate(paths: list[Path]) -> int:
    from headway.cli import validate_text
    from headway.redaction import install_log_redaction

    install_log_redaction()  # as `cli.main` does before any command runs
    from headway.source.manifest_files import check_paths

    report = check_paths(paths, plugins=None)
    validate_text.print_text(report)
    return validate_text.exit_status(report)


def _guarded(run: Callable[[], int]) -> int:
    """`run()`, with a closed output pipe handled as Typer's runner handles it."""
    try:
        return run()
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper  # only once the reader is gone

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        return 1
