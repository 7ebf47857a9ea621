"""What `headway check` read from each file's bytes, kept between runs (a pre-commit hook runs
the check again after a one-file change, and parsing every YAML file again is most of its
work after start-up).

Content-addressed: an entry is keyed by the SHA-256 of a file's bytes and holds the documents
the YAML reader made of them (each document's object, index and line); the file's path is
not part of it, so a moved or copied file is a hit. Every entry of a cache file was written
by the same reader: the file's header names a fingerprint of everything else a parse depends
on (this cache's format, Headway's version, the Python build, PyYAML and libyaml's versions,
the source of the reader modules, `model/yamlload.py`, `model/yamlfast.py` and
`model/yamlrust.py`, and yaml_rs's installed files), and
a cache file with another fingerprint is not read. Only a clean parse is kept (a file with
a YAML error is parsed again each run, its diagnostics with it), and only where `marshal`
stores every value exactly (a document holding a date or another type it refuses is parsed
again each run): an entry's objects come back equal and of the same types.

A cache file per checked directory (`check_cache_files`: in `$XDG_CACHE_HOME/headway/check/`,
default `~/.cache/headway/check/`); a run rewrites it (atomically) with the entries that run
used, so files that left the repository leave the cache; a run that changed nothing touches it
instead, and the least recently used cache files beyond `KEEP_FILES` are removed (not the
least recently written: a repository checked daily without a change would lose its cache
first). A file that is truncated, corrupt or foreign (another fingerprint) is ignored and
replaced. `headway check --no-cache` neither reads nor writes it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import marshal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from headway import __version__
from headway.cli import check_cache_files
from headway.model import yamlfast, yamlload, yamlrust
from headway.model.yamlload import Document, FileNodes, LoadResult, load_documents

if TYPE_CHECKING:
    from headway.cli.check_prefetch import Prefetch

__all__ = ["KEEP_FILES", "ParseCache", "cache_directory", "fingerprint", "open_cache"]

_FORMAT = b"headway-check-parses 1\n"
_PREFIX = "parses"
KEEP_FILES = check_cache_files.KEEP_FILES  # cache files (checked directories) kept
_Entry = tuple[tuple[Any, int, int], ...]  # (object, index, line) per document


def cache_directory() -> Path:
    """`$XDG_CACHE_HOME/headway/check`, or `~/.cache/headway/check`."""
    return check_cache_files.cache_directory()


@functools.cache
def fingerprint() -> bytes:
    """What a parse depends on besides the bytes parsed, hashed (64 hex digits)."""
    digest = hashlib.sha256(_FORMAT)
    libyaml = getattr(getattr(yaml, "_yaml", None), "get_version_string", lambda: "none")()
    for part in (__version__, sys.version, yaml.__version__, libyaml):
        digest.update(part.encode() + b"\0")
    for module in (yamlload, yamlfast, yamlrust):
        digest.update(Path(str(module.__file__)).read_bytes() + b"\0")
    digest.update(_yaml_rs_files().encode() + b"\0")
    return digest.hexdigest().encode()


def _yaml_rs_files() -> str:
    """yaml_rs's installed files, with their sizes and modification times (found without
    importing it: a warm run parses nothing), or "none"."""
    spec = importlib.util.find_spec("yaml_rs")
    if spec is None or spec.origin is None:
        return "none"
    folder = Path(spec.origin).parent
    return "\n".join(
        f"{entry.name} {entry.stat().st_size} {entry.stat().st_mtime_ns}"
        for entry in sorted(folder.iterdir())
        if entry.is_file()
    )


@dataclass
class ParseCache:
    """The entries read from one cache file (`known`, each still marshalled) and those this
    run used or made (`used`); `save` writes `used` back when it differs from `known`."""

    file: Path | None
    known: dict[str, bytes] = field(default_factory=dict)
    used: dict[str, bytes] = field(default_factory=dict)
    # Each document of a clean parse, by id: the document, and what names it across runs
    # (its file's bytes' hash, its path and index), for answers kept per document.
    origins: dict[int, tuple[Document, str]] = field(default_factory=dict)
    # A child parsing some files of a first run (`check_prefetch`): its entries are taken
    # when one of its files is first asked for.
    prefetch: Prefetch | None = None

    def origin(self, document: Document) -> str | None:
        """What names `document` across runs when this cache read it from a file it could
        keep (a clean parse): the same bytes at the same path give the same documents."""
        known = self.origins.get(id(document))
        return None if known is None or known[0] is not document else known[1]

    def _remember(self, key: str, result: LoadResult) -> LoadResult:
        for document in result.documents:
            name = f"{key}\0{document.file}\0{document.index}"
            self.origins[id(document)] = (document, name)
        return result

    def load_documents(self, data: bytes, file: str) -> LoadResult:
        """`load_documents(data decoded, file)`, from the cache when these bytes were read
        before."""
        text = data.decode("utf-8", errors="replace")
        if self.file is None:
            return load_documents(text, file)
        key = hashlib.sha256(data).hexdigest()
        stored = self.used.get(key) or self.known.get(key)
        if stored is None and self.prefetch is not None and file in self.prefetch.paths:
            self.known.update(self.prefetch.take())
            self.prefetch = None
            stored = self.known.get(key)
        entry = None if stored is None else _decoded(stored)
        if stored is not None and entry is not None:
            self.used[key] = stored
            nodes = FileNodes(text)
            documents = [Document(o, file, i, line, nodes) for o, i, line in entry]
            return self._remember(key, LoadResult(documents, []))
        result = load_documents(text, file)
        if not result.diagnostics:
            encoded = _encoded(tuple((d.obj, d.index, d.line) for d in result.documents))
            if encoded is not None:
                self.used[key] = encoded
                self._remember(key, result)
        return result

    def save(self) -> None:
        """Write the entries this run used, if they differ from what was read, else mark the
        cache file used (its modification time); a cache that cannot be written (read-only
        home, full disk) is left as it was."""
        if self.file is None:
            return
        if self.used.keys() == self.known.keys():
            check_cache_files.mark_used(self.file)
            return
        content = check_cache_files.sealed(_FORMAT + fingerprint() + b"\n", self.used)
        try:
            check_cache_files.replace_file(self.file, content, prefix=_PREFIX, keep=KEEP_FILES)
        except OSError:
            return


def open_cache(root: Path, *, directory: Path | None = None) -> ParseCache:
    """The cache of the directory `root` checks (in `directory`, by default
    `cache_directory()`); empty when there is none or it cannot be used, and none at all
    when the reader's own source cannot be read to fingerprint it (then every file is
    parsed and nothing is written)."""
    try:
        fingerprint()
    except OSError:
        return ParseCache(None)
    file = check_cache_files.cache_file(root, prefix=_PREFIX, directory=directory)
    return ParseCache(file, _read(file))


def _read(file: Path) -> dict[str, bytes]:
    """The entries of a cache file whose format, fingerprint and checksum hold; else none."""
    entries = check_cache_files.unsealed(file, _FORMAT + fingerprint() + b"\n")
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, bytes)}


def _encoded(entry: _Entry) -> bytes | None:
    """The entry marshalled, or None where marshal refuses a value: any type it does not
    store exactly, subclasses of the types it stores included (the buffer types, which it
    would store as bytes, the YAML reader never makes)."""
    try:
        return marshal.dumps(entry)
    except ValueError:
        return None


def _decoded(stored: bytes) -> _Entry | None:
    try:
        entry = marshal.loads(stored)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(entry, tuple) or not all(_is_document(d) for d in entry):
        return None
    return entry


def _is_document(item: Any) -> bool:
    return (
        isinstance(item, tuple) and len(item) == 3 and type(item[1]) is int and type(item[2]) is int
    )
