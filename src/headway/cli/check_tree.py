"""A source tree that `headway check` asks once per file: the scan reads every manifest, then
the directory renderer reads the same files and asks what each app path and candidate
library file is and which files it holds. One run never sees a checkout change, so the
answers are kept, and most come from one listing of the whole tree.

A directory the listing walked into (some listed file lies under it) is a directory, and
its files are the listing's slice under it: `files` walks a directory the same way from any
start, and a directory reached through a link is never walked into, so the slice is exactly
what `files(path)` would return. A file read once is a file. Anything else is asked of the
tree, as are errors, which are never remembered (they are raised again, as `tree` raises
them)."""

from __future__ import annotations

import bisect
from pathlib import Path

from headway.source.errors import SourceError
from headway.source.tree import EntryKind, EscapingLink, TreeReader, normalize_path

__all__ = ["MANIFEST_SUFFIXES", "ReadOnceTree", "manifest_files"]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class ReadOnceTree:
    """`tree`, with each file's content, each path's kind and each directory's names
    remembered after the first ask, and `files` answered from one listing."""

    def __init__(self, tree: TreeReader) -> None:
        self._tree = tree
        self._contents: dict[str, bytes] = {}
        self._kinds: dict[str, EntryKind | None] = {}
        self._names: dict[str, list[str]] = {}
        self._listing: list[str] | None = None
        self._walked: frozenset[str] = frozenset()

    @property
    def description(self) -> str:
        return self._tree.description

    def kind(self, path: str) -> EntryKind | None:
        if path not in self._kinds:
            self._kinds[path] = self._known_kind(path) or self._tree.kind(path)
        return self._kinds[path]

    def _known_kind(self, path: str) -> EntryKind | None:
        """What `path` is, when the listing or a read already said; None: not known."""
        if path in self._contents:
            return "file"
        return "dir" if self._walked_directory(path) is not None else None

    def files(self, path: str = "") -> list[str]:
        clean = self._walked_directory(path)
        if clean is None:
            return self._tree.files(path)
        listing = self._whole_listing()
        if not clean:
            return list(listing)
        start = bisect.bisect_left(listing, f"{clean}/")
        end = bisect.bisect_left(listing, f"{clean}/\U0010ffff", lo=start)
        return listing[start:end]

    def names(self, path: str = "") -> list[str]:
        if path not in self._names:
            self._names[path] = self._tree.names(path)
        return list(self._names[path])

    def read(self, path: str) -> bytes:
        content = self._contents.get(path)
        if content is None:
            content = self._contents[path] = self._tree.read(path)
        return content

    def object_id(self, path: str = "") -> str:
        return self._tree.object_id(path)

    def materialize(self, destination: Path, path: str = "") -> tuple[EscapingLink, ...]:
        return self._tree.materialize(destination, path)

    def _walked_directory(self, path: str) -> str | None:
        """`path` normalized, when the whole listing walked into it; else None."""
        try:
            clean = normalize_path(path)
        except SourceError:
            return None  # the tree says what is wrong with the path
        self._whole_listing()
        return clean if clean in self._walked else None

    def _whole_listing(self) -> list[str]:
        if self._listing is None:
            try:
                self._listing = self._tree.files()
            except SourceError:
                self._listing = []  # nothing is known: every question goes to the tree
            self._walked = frozenset(_directories_above(self._listing))
        return self._listing


def manifest_files(listing: list[str]) -> list[str]:
    """The manifest files of a checkout's listing, in its order: YAML and JSON files, not
    hidden at the top (tool config) and not inside a Helm chart (a directory holding a
    `Chart.yaml`, whose templates the chart's render reads)."""
    charts = [f.rpartition("/")[0] for f in listing if f.rpartition("/")[2] == "Chart.yaml"]
    return [
        f
        for f in listing
        if f.endswith(MANIFEST_SUFFIXES)
        and not f.startswith(".")
        and not any(c == "" or f.startswith(f"{c}/") for c in charts)
    ]


def _directories_above(files: list[str]) -> set[str]:
    """Every directory holding one of `files`, at any depth ("" for the root)."""
    found: set[str] = set()
    for file in files:
        parent = file.rpartition("/")[0]
        while parent not in found:
            found.add(parent)
            if not parent:
                break
            parent = parent.rpartition("/")[0]
    return found
