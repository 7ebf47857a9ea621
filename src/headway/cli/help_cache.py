"""Help screens kept after Typer first renders them, so `headway X --help` prints without Rich.

Typer renders a command's help with Rich: importing its help formatter and laying out a
panel and a table per group of options is about 60-70 ms of `headway serve --help`'s 0.17 s
(40 % of it), the same bytes every time for the same command, terminal and versions. So the
`headway` program (`cli/entry.py`, not the Typer app itself: `tests/test_cli_help_unchanged.py`
compares the two) renders a help screen once through Typer, keeps the bytes in
`$XDG_CACHE_HOME/headway/help/` (default `~/.cache/headway/help/`) under a key, and prints them
again for the same key without importing Rich.

The key is everything the rendering reads, so a kept screen is never shown where Typer would
print something else:

- the versions of Headway and Python, and which files of Typer's formatter and Rich's
  console are installed (path, size, time of change);
- what Rich decides the terminal is: whether standard output is a terminal, each environment
  variable Rich or Typer's formatter reads (`COLUMNS`, `TERM`, `NO_COLOR`, `FORCE_COLOR`,
  `TERMINAL_WIDTH`, ... see `_ENVIRONMENT`), and the size of the terminal on standard input,
  output and error, which Rich asks for when `COLUMNS` is unset;
- the command as Typer reads it: its path (`headway app list`), its own attributes (help,
  epilog, usage, markup mode, ...), every parameter with every attribute (names, type and its
  settings, default, help, panel, flags), the context's settings, and for a group the name and
  attributes of each command it lists.

A value the key cannot describe the same way twice (a function as a default: Typer prints
"(dynamic)") makes a key no later run repeats: that help renders every time, as before. The
directory holds at most `KEEP_FILES` screens (it is emptied when it would hold more); a screen
is written whole or not at all, and one that cannot be read or written is rendered instead.
`HEADWAY_HELP_CACHE=0` turns it off.
"""

from __future__ import annotations

import contextlib
import enum
import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from typer import _click as click
from typer.core import HAS_RICH, TyperCommand, TyperGroup

__all__ = ["KEEP_FILES", "cache_directory", "help_key", "install"]

KEEP_FILES = 512
# Environment variables Rich's Console or Typer's formatter reads when it renders help.
_ENVIRONMENT = (
    "COLUMNS",
    "LINES",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERMINAL_WIDTH",
    "GITHUB_ACTIONS",
    "PY_COLORS",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "JPY_PARENT_PID",
    "VSCODE_PID",
    "DATABRICKS_RUNTIME_VERSION",
    "WT_SESSION",
    "ANSICON",
    "ConEmuANSI",
)
# What of the context a help screen reads (widths, option names, defaults shown and looked up).
_CONTEXT = (
    "info_name",
    "terminal_width",
    "max_content_width",
    "help_option_names",
    "show_default",
    "default_map",
    "auto_envvar_prefix",
    "color",
)
_MAX_DEPTH = 5
_installed = False

FormatHelp = Callable[[Any, click.Context, click.HelpFormatter], None]


def cache_directory() -> Path:
    """`$XDG_CACHE_HOME/headway/help`, or `~/.cache/headway/help`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "headway" / "help"


def install() -> None:
    """Route Typer's help rendering of commands and groups through the kept screens (once)."""
    global _installed  # noqa: PLW0603 - patching Typer's classes happens once per process
    if _installed or os.environ.get("HEADWAY_HELP_CACHE") == "0":
        return
    _installed = True
    for cls in (TyperCommand, TyperGroup):
        cls.format_help = _kept(cls.format_help)  # type: ignore[method-assign,assignment]


def _kept(render: FormatHelp) -> FormatHelp:
    def format_help(self: Any, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not HAS_RICH or getattr(self, "rich_markup_mode", None) is None:
            render(self, ctx, formatter)  # Click's own formatter: nothing of Rich to spare
            return
        key = help_key(self, ctx)
        path = None if key is None else cache_directory() / f"{key}.txt"
        kept = _read(path) if path is not None else None
        if kept is not None:
            sys.stdout.write(kept)
            return
        with _captured() as captured:
            render(self, ctx, formatter)
        text = captured.getvalue()
        sys.stdout.write(text)
        if path is not None and text:  # nothing printed: nothing worth keeping
            _write(path, text)

    return format_help


@contextlib.contextmanager
def _captured() -> Iterator[io.StringIO]:
    """Standard output replaced, while Typer renders, by a buffer that answers what Rich
    asks of it as the real stream does (`isatty`, `encoding`, `fileno`)."""
    real = sys.stdout
    buffer = _Mirror(real)
    sys.stdout = buffer
    try:
        yield buffer
    finally:
        sys.stdout = real


class _Mirror(io.StringIO):
    """A text buffer that reports the real stream's terminal status and encoding."""

    def __init__(self, real: Any) -> None:
        super().__init__()
        self._real = real

    def isatty(self) -> bool:
        return bool(self._real.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._real, "encoding", None) or "utf-8")

    def fileno(self) -> int:
        return int(self._real.fileno())


def help_key(command: click.Command, ctx: click.Context) -> str | None:
    """The key of `command`'s help in `ctx` (see the module's docstring); None when standard
    output is missing or its state cannot be read."""
    import hashlib  # here, not at the top: commands other than help do not pay for them
    import json

    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):
        return None
    described = {
        "versions": _versions(),
        "terminal": terminal,
        "sizes": _terminal_sizes(),
        "environment": {name: os.environ.get(name) for name in _ENVIRONMENT},
        "path": ctx.command_path,
        "context": _describe({name: getattr(ctx, name, None) for name in _CONTEXT}),
        "command": _command(command, ctx),
    }
    text = json.dumps(described, sort_keys=True, default=_unstable)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _command(command: click.Command, ctx: click.Context) -> dict[str, Any]:
    own = {k: v for k, v in vars(command).items() if k not in ("params", "commands", "callback")}
    described: dict[str, Any] = {
        "class": type(command).__qualname__,
        "own": _describe(own),
        "params": [_describe(vars(param)) for param in command.get_params(ctx)],
    }
    if isinstance(command, TyperGroup):
        listed = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            attributes = {} if sub is None else vars(sub)
            listed.append(
                [name, _describe({k: v for k, v in attributes.items() if k != "callback"})]
            )
        described["commands"] = listed
    return described


def _describe(value: Any, depth: int = 0) -> Any:
    """`value` as JSON that says the same thing in every run (see `_unstable`)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= _MAX_DEPTH:
        return _unstable(value)
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, _describe(value.value, depth + 1)]
    if isinstance(value, Path):
        return ["Path", str(value)]
    if isinstance(value, dict):
        return {str(k): _describe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_describe(v, depth + 1) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if callable(value) and hasattr(value, "__qualname__"):
        # A function or class: help shows at most "(dynamic)" for it, never what it returns.
        return ["callable", getattr(value, "__module__", ""), value.__qualname__]
    if hasattr(value, "__dict__"):
        fields = {k: v for k, v in vars(value).items() if not k.startswith("__")}
        return [type(value).__qualname__, _describe(fields, depth + 1)]
    return _unstable(value)


def _unstable(value: Any) -> str:
    """A value by its `repr`; one that shows an address (`<... at 0x...>`) is this process's
    own, so a key holding it names this run alone and is never found again."""
    text = repr(value)
    return f"repr:{text}@{os.getpid()}" if " at 0x" in text else f"repr:{text}"


def _versions() -> dict[str, Any]:
    """Headway's and Python's versions, and for Typer's help formatter and Rich's console
    the file, size and time of change of their modules: an upgrade rewrites them (reading
    the installed packages' metadata instead cost 20 ms, a fifth of a help screen)."""
    import importlib.util

    import headway

    found: dict[str, Any] = {"headway": headway.__version__, "python": sys.version}
    for module in ("typer.rich_utils", "typer.core", "rich.console", "rich.table", "rich.text"):
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        try:
            status = os.stat(origin) if origin else None
        except OSError:
            status = None
        found[module] = [origin, status and status.st_size, status and status.st_mtime_ns]
    return found


def _terminal_sizes() -> list[list[int] | None]:
    sizes: list[list[int] | None] = []
    for descriptor in (0, 1, 2):
        try:
            size = os.get_terminal_size(descriptor)
        except (OSError, ValueError):
            sizes.append(None)
        else:
            sizes.append([size.columns, size.lines])
    return sizes


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: Path, text: str) -> None:
    """`text` into `path`, whole (a temporary file renamed over it) or not at all."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if sum(1 for _ in os.scandir(path.parent)) >= KEEP_FILES:
            for entry in os.scandir(path.parent):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        return
