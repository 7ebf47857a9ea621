"""The code `dataclasses` generates for each class, compiled once and kept between runs.

For every dataclass the standard library writes the source text of the methods it adds
(`__init__`, `__repr__`, `__eq__`, `__hash__`, and `__setattr__`/`__delattr__` for a frozen
one) and hands each text to `exec`, which parses and compiles it. That is about half a
millisecond a class: 137 classes and 800 texts, some 80 ms, of a `headway check` run
(docs/performance.md), and the same texts on every run of the same versions.

The `headway` program (`entry.run`) gives the `dataclasses` module an `exec` of its own (a
module global, which Python finds before the builtin): a text it compiled in an earlier run
runs as the kept code object; any other text is compiled as the builtin compiles it (file name
`<string>`, mode `exec`, no future flags inherited: the `dataclasses` module has none) and
kept. A text always compiles to the same code, so what runs is what the builtin would have
run (`tests/test_cli_dataclass_code.py` compares the methods made both ways). Anything but
a text, and a call without globals, goes to the builtin unchanged.

The kept code is in `$XDG_CACHE_HOME/headway/code/` (default `~/.cache/headway/code/`), one
file per Python bytecode format and version, read when the first dataclass is made and
rewritten at exit when a run compiled a text it did not hold (at most `KEEP_TEXTS`; past it,
only that run's). Code is only read from a file the user owns that no one else may write, in
a directory no one else may write (code from a file another user could change would run as
this user); a file that cannot be read, fails its checksum or does not unmarshal is ignored
and replaced. `HEADWAY_DATACLASS_CACHE=0` turns it off. (The file is written and checked here
rather than by `check_cache_files`, whose SHA-256 and temporary files would bring `hashlib`
and `tempfile` into `validate`'s start-up, which loads neither.)
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import zlib
from pathlib import Path
from types import CodeType
from typing import Any

from headway.private_files import private

__all__ = ["KEEP_TEXTS", "cache_file", "install", "installed", "texts_compiled", "uninstall"]

KEEP_TEXTS = 8192
_FORMAT = b"headway-dataclass-code 1\n"


class _Kept:
    """The texts read from the cache file (on the first call), each with its code marshalled
    (unmarshalled when a class needs it: a command that makes a few classes loads only
    theirs), and the texts compiled since."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.codes: dict[str, bytes] | None = None
        self.used: dict[str, bytes] = {}
        self.compiled = 0  # texts this run compiled (not in the file)

    def code(self, text: str) -> CodeType:
        if self.codes is None:
            self.codes = _read(self.file)
        kept = self.codes.get(text)
        code = None if kept is None else _unmarshalled(kept)
        if kept is None or code is None:
            code = compile(text, "<string>", "exec", dont_inherit=True)
            kept = self.codes[text] = marshal.dumps(code)
            self.compiled += 1
        self.used[text] = kept
        return code

    def save(self) -> None:
        if not self.compiled or self.codes is None:
            return
        keep = self.codes if len(self.codes) <= KEEP_TEXTS else self.used
        _write(self.file, keep)


def _unmarshalled(kept: bytes) -> CodeType | None:
    try:
        code = marshal.loads(kept)
    except (EOFError, ValueError, TypeError):
        return None
    return code if type(code) is CodeType else None


_kept: _Kept | None = None


def cache_file() -> Path:
    """`$XDG_CACHE_HOME/headway/code/dataclasses-<bytecode magic>-<Python version>.marshal`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    magic = importlib.util.MAGIC_NUMBER.hex()
    version = "-".join(str(part) for part in sys.version_info[:3])
    return Path(base) / "headway" / "code" / f"dataclasses-{magic}-{version}.marshal"


def install() -> None:
    """Give `dataclasses` the kept code's `exec` (once; nothing when turned off)."""
    global _kept  # noqa: PLW0603 - one `exec` per process, as `dataclasses` is one module
    if _kept is not None or os.environ.get("HEADWAY_DATACLASS_CACHE") == "0":
        return
    _kept = _Kept(cache_file())
    setattr(dataclasses, "exec", _exec)  # noqa: B010 - a module global shadowing the builtin
    atexit.register(_kept.save)


def installed() -> bool:
    return _kept is not None and getattr(dataclasses, "exec", None) is _exec


def texts_compiled() -> int:
    """How many texts this process compiled since `install()` (none kept for them)."""
    return 0 if _kept is None else _kept.compiled


def uninstall() -> None:
    """Give `dataclasses` the builtin `exec` back (tests), saving what was compiled."""
    global _kept  # noqa: PLW0603
    if _kept is None:
        return
    atexit.unregister(_kept.save)
    _kept.save()
    _kept = None
    if getattr(dataclasses, "exec", None) is _exec:
        delattr(dataclasses, "exec")


def _exec(source: Any, scope: Any = None, names: Any = None, /) -> None:
    """`exec(source, globals, locals)` as `dataclasses` calls it, with a text's code kept."""
    kept = _kept
    if kept is None or type(source) is not str or scope is None:
        if scope is None:  # a call without globals runs in the caller's namespace
            frame = sys._getframe(1)
            scope, names = frame.f_globals, frame.f_locals if names is None else names
        builtins.exec(source, scope, names)
        return
    builtins.exec(kept.code(source), scope, names)


def _read(file: Path) -> dict[str, bytes]:
    """The kept texts and their code, marshalled; empty when the file is missing, not safely owned,
    damaged or of another format."""
    try:
        with open(file, "rb") as handle:
            if not (private(os.fstat(handle.fileno())) and private(os.stat(file.parent))):
                return {}
            content = handle.read()
    except OSError:
        return {}
    if not content.startswith(_FORMAT):
        return {}
    checksum, _, payload = content[len(_FORMAT) :].partition(b"\n")
    if checksum != str(zlib.crc32(payload)).encode():
        return {}
    try:
        value = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {t: c for t, c in value.items() if type(t) is str and type(c) is bytes}


def _write(file: Path, codes: dict[str, bytes]) -> None:
    """`codes` into `file`, whole (a temporary file renamed over it) or not at all."""
    payload = marshal.dumps(codes)
    content = _FORMAT + str(zlib.crc32(payload)).encode() + b"\n" + payload
    temporary = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(content)
        os.replace(temporary, file)
    except OSError:
        with contextlib.suppress(OSError):  # none made, or no directory to make it in
            temporary.unlink(missing_ok=True)
