"""The kept help screens (`cli/help_cache.py`): a screen is found again only where Typer
would print the same bytes, and the cache never stands between a user and the help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer
import typer.main
from typer import _click as click

from headway.cli.help_cache import help_key


def _headway(*args: str, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
        check=False,
    )


def _screens(cache: Path) -> list[Path]:
    where = cache / "headway" / "help"
    return sorted(where.iterdir()) if where.exists() else []


def test_a_screen_is_kept_per_terminal_width(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for columns in ("100", "60", "100", "60"):
        kept = _headway("serve", "--help", cache=cache, COLUMNS=columns)
        fresh = _headway("serve", "--help", cache=cache, COLUMNS=columns, HEADWAY_HELP_CACHE="0")
        assert kept.returncode == fresh.returncode == 0
        assert kept.stdout == fresh.stdout, columns
    assert len(_screens(cache)) == 2


def test_a_kept_screen_is_what_is_printed_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _headway("check", "--help", cache=cache)
    [screen] = _screens(cache)
    assert screen.read_text() == first.stdout.removesuffix("\n")
    screen.write_text("kept screen\n")
    assert _headway("check", "--help", cache=cache).stdout == "kept screen\n\n"


def test_turned_off_nothing_is_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    done = _headway("check", "--help", cache=cache, HEADWAY_HELP_CACHE="0")
    assert "Usage" in done.stdout
    assert _screens(cache) == []


def test_an_unwritable_cache_still_prints_the_help(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache directory would be\n")
    done = _headway("check", "--help", cache=cache)
    assert done.returncode == 0
    assert "Usage" in done.stdout
    assert done.stderr == ""


def _key_of(option_help: str, default: str = ".", *, columns: str = "80") -> str:
    app = typer.Typer()

    @app.command()
    def run(path: str = typer.Option(default, "--path", help=option_help)) -> None:
        """Run it."""

    @app.command()
    def other() -> None:
        """Another command (Typer builds a group of two)."""

    group = typer.main.get_command(app)
    command = group.commands["run"]  # type: ignore[attr-defined]
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = columns
    try:
        with click.Context(command, info_name="run") as ctx:
            key = help_key(command, ctx)
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    assert key is not None
    return key


def test_the_key_follows_what_the_help_reads() -> None:
    same = _key_of("Where to run.")
    assert _key_of("Where to run.") == same  # a second build of the same command
    assert _key_of("Where to run it.") != same  # an option's help
    assert _key_of("Where to run.", default="/srv") != same  # its default
    assert _key_of("Where to run.", columns="120") != same  # the width


def _on_a_terminal(*args: str, cache: Path, **env: str) -> bytes:
    """What `headway ARGS` writes to a pseudo-terminal of 90 columns (as a user's shell)."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 90, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    environment.update({"XDG_CACHE_HOME": str(cache), "TERM": "xterm-256color", **env})
    process = subprocess.Popen(
        [sys.executable, "-m", "headway", *args],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    return b"".join(chunks)


def test_on_a_terminal_a_kept_screen_is_what_rich_prints_there(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    rendered = _on_a_terminal("serve", "--help", cache=cache, HEADWAY_HELP_CACHE="0")
    assert b"\x1b[" in rendered  # Rich saw a terminal: colours
    first = _on_a_terminal("serve", "--help", cache=cache)
    assert len(_screens(cache)) == 1
    again = _on_a_terminal("serve", "--help", cache=cache)
    assert first == rendered
    assert again == rendered
