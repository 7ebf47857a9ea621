"""Where `headway check` keeps what it may reuse between runs, and how those files are kept.

Each cache (`check_parse_cache`, `check_drill_cache`) has one file per checked directory in
`$XDG_CACHE_HOME/headway/check/` (default `~/.cache/headway/check/`), named by a hash of the
directory's real path. A file is replaced atomically; a run that has nothing new to keep
marks it used instead (its modification time), and beyond `KEEP_FILES` files of one cache
the least recently used go. Every failure to write is the caller's to ignore: a cache that
cannot be written changes nothing but speed.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "KEEP_FILES",
    "cache_directory",
    "cache_file",
    "mark_used",
    "remove_oldest",
    "replace_file",
    "sealed",
    "unsealed",
    "write_atomically",
]

KEEP_FILES = 32  # files of each cache (checked directories) kept; the least recently used go


def cache_directory() -> Path:
    """`$XDG_CACHE_HOME/headway/check`, or `~/.cache/headway/check`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "headway" / "check"


def cache_file(root: Path, *, prefix: str, directory: Path | None = None) -> Path:
    """The file of the cache named `prefix` for the checked directory `root`."""
    where = directory if directory is not None else cache_directory()
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return where / f"{prefix}-{name}.marshal"


def sealed(header: bytes, value: Any) -> bytes:
    """A cache file's content: `header` (the cache's format and what its entries depend
    on), the SHA-256 of the marshalled `value`, a newline, then `value` marshalled.
    Raises ValueError for a value marshal cannot store."""
    payload = marshal.dumps(value)
    return header + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def unsealed(file: Path, header: bytes) -> object | None:
    """The value `sealed(header, value)` wrote to `file`; None when the file cannot be read,
    was written under another header, or fails its checksum or unmarshalling (damaged,
    truncated): a cache that cannot be trusted is one that is empty."""
    try:
        content = file.read_bytes()
    except OSError:
        return None
    if not content.startswith(header):
        return None
    checksum, _, payload = content[len(header) :].partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None
    try:
        value: object = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return value


def replace_file(file: Path, content: bytes, *, prefix: str, keep: int = KEEP_FILES) -> None:
    """Write `file` atomically, then remove the least recently used files of its cache
    beyond `keep`. Raises OSError when the cache cannot be written."""
    file.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(file, content)
    remove_oldest(file.parent, prefix=prefix, keep=keep)


def write_atomically(file: Path, content: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=file.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.replace(temporary, file)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def mark_used(file: Path) -> None:
    """Make `file` the most recently used file of its cache (none there, or read-only: left)."""
    try:
        os.utime(file)
    except OSError:
        return


def remove_oldest(directory: Path, *, prefix: str, keep: int) -> None:
    files = sorted(directory.glob(f"{prefix}-*.marshal"), key=lambda p: p.stat().st_mtime)
    for old in files[: max(0, len(files) - keep)]:
        old.unlink(missing_ok=True)
