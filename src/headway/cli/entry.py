"""The `headway` program's entry point: the console script and `python -m headway`.

Importing Typer (with the Click it vendors) costs more CPU than `headway validate` of a
small repository spends validating, and building the app costs more on top. Two calls whose
outcome Typer does not shape run without it:

- `headway --version`, alone;
- `headway validate PATH...` where every PATH is a plain word (no option, no `--`, not empty)
  naming a file or directory that exists and is readable, with at most one `--format text`
  or `--format json` (`-o`, `--format=`, `-ojson`). For such a line Typer hands the paths to
  the command unchanged (`click.Path(readable=True)`, then `pathlib.Path`), and the command
  validates them and prints the same text or JSON (`cli/validate_text.py`).

Everything else goes to the Typer app of `cli/main.py`: any other option (`--help`,
`--plugins-dir`, a typo, a second `--format`, a format Typer refuses), no path, a path that
is missing or unreadable (Typer's errors), any other command, and a shell-completion
request. The direct path keeps what Typer's runner does around a command: log redaction
installed first, a Ctrl-C is exit status 130, a closed output pipe is exit status 1 without
a traceback. `tests/test_cli_entry_direct.py` runs a corpus of
command lines both ways and compares output, errors and exit status byte for byte.

The console script and `python -m headway` enter through `run()`, which marks the process as
the program: only then are the dataclasses' generated methods kept between runs
(`cli/dataclass_code.py`) and may a one-shot command leave without tearing its heap down
(`cli/quick_exit.py`). `main()` is the same program for in-process callers (tests, probes),
and always ends by raising `SystemExit`.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["direct_status", "main", "plain_paths", "plain_validate", "run"]

_FORMATS = ("text", "json")  # `validate`'s --format values, as Typer's choice spells them


def run() -> None:
    """The `headway` program (the console script, `python -m headway`): `main()`, then the
    exit, without tearing the heap down after a command that allows it (`quick_exit`).
    Tests and other in-process callers call `main()`, which always raises `SystemExit`."""
    from headway.cli import quick_exit

    quick_exit.running_as_program()
    try:
        main()
    except SystemExit as done:
        quick_exit.leave(done.code)
    quick_exit.leave(0)


def main() -> None:
    _never_fail_to_encode()
    if "HEADWAY_YAML_RUST" in os.environ or "HEADWAY_YAML_CROSSCHECK" in os.environ:
        from headway.cli import yaml_reader

        yaml_reader.configure()
    try:
        status = direct_status(sys.argv[1:])
    except KeyboardInterrupt:
        # As `cli.main.main` and Typer do: a Ctrl-C, even while modules import, is status 130.
        raise SystemExit(130) from None
    if status is not None:
        raise SystemExit(status)
    _keep_dataclass_code()
    from headway.cli import help_cache
    from headway.cli.main import main as run_typer_app

    help_cache.install()  # the program's help screens, kept once Typer rendered them
    run_typer_app()


def _keep_dataclass_code() -> None:
    """As the program, before the modules that make dataclasses load: their generated
    methods' code is kept between runs (`cli/dataclass_code.py`). Not for `--version`,
    which makes none."""
    from headway.cli import quick_exit

    if quick_exit.is_program():
        from headway.cli import dataclass_code

        dataclass_code.install()


def _never_fail_to_encode() -> None:
    """Standard output and error write a character their encoding lacks as an escape
    (`caf\\xe9`) instead of raising UnicodeEncodeError: a manifest's or a file's name in
    any language must not turn a report into a traceback under `LANG=C` or
    `PYTHONIOENCODING=ascii`. What they can encode is written unchanged."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def direct_status(args: Sequence[str]) -> int | None:
    """Run `args` without Typer and return the exit status, or None if Typer must run it."""
    if any(name.endswith("_COMPLETE") for name in os.environ):
        return None  # Click's shell completion reads `_<PROGRAM>_COMPLETE` before parsing
    if list(args) == ["--version"]:
        return _guarded(_print_version)
    if args[:1] == ["validate"]:
        call = plain_validate(args[1:])
        if call is not None:
            paths, output = call
            return _guarded(lambda: _validate(paths, output=output))
    return None


def plain_validate(words: Sequence[str]) -> tuple[list[Path], str] | None:
    """The paths and the format (`text` or `json`) `validate` gets from `words`, if Typer
    would pass each path on and the command would find it; None when Typer must answer."""
    found = _without_format_option(words)
    if found is None:
        return None
    words, output = found
    paths = plain_paths(words)
    return None if paths is None else (paths, output)


def _without_format_option(words: Sequence[str]) -> tuple[list[str], str] | None:
    """`words` without their first option when it is `--format`/`-o` (`-o json`, `--format
    json`, `--format=json`, `-ojson`: Click's spellings), and its value (`text` when there
    is no option); None for any other option or a value Typer would refuse."""
    index = next((i for i, word in enumerate(words) if word.startswith("-")), None)
    if index is None:
        return list(words), "text"
    option, after = words[index], list(words[index + 1 :])
    if option in ("-o", "--format") and after:
        value, after = after[0], after[1:]
    elif option.startswith("--format="):
        value = option.removeprefix("--format=")
    elif option.startswith("-o") and not option.startswith("--"):
        value = option.removeprefix("-o")
    else:
        return None
    if value not in _FORMATS:
        return None
    return [*words[:index], *after], value  # a second option stays: `plain_paths` refuses it


def plain_paths(words: Sequence[str]) -> list[Path] | None:
    """The paths `validate` gets from `words` (no option among them), if Typer would pass
    each on and the command would find it; None when Typer must answer (nothing, a missing
    path, an empty word, anything Click reads as an option)."""
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

    _echo(f"headway {headway.__version__}")
    return 0


def _validate(paths: list[Path], *, output: str) -> int:
    _keep_dataclass_code()
    from headway.cli import validate_text
    from headway.redaction import install_log_redaction

    install_log_redaction()  # as `cli.main` does before any command runs
    from headway.source.manifest_files import check_paths

    report = check_paths(paths, plugins=None)
    if output == "json":
        _echo(validate_text.json_report(report))
    else:
        validate_text.print_text(report)
    return validate_text.exit_status(report)


def _echo(text: str) -> None:
    """`text` and a newline on standard output, as `typer.echo` writes ASCII text: nothing
    when the process has no standard output (started with it closed, `>&-`)."""
    out = sys.stdout
    if out is None:
        return
    out.write(f"{text}\n")
    out.flush()


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
