"""A source tree that `headway check` asks once per file: the scan reads every manifest, then
the directory renderer reads the same files and asks what each app path and candidate
library file is. One run never sees a checkout change, so the answers are kept."""

from __future__ import annotations

from pathlib import Path

from headway.source.tree import EntryKind, EscapingLink, TreeReader

__all__ = ["ReadOnceTree"]


class ReadOnceTree:
    """`tree`, with each file's content and each path's kind remembered after the first ask
    (errors are not remembered: they are raised again, as `tree` raises them)."""

    def __init__(self, tree: TreeReader) -> None:
        self._tree = tree
        self._contents: dict[str, bytes] = {}
        self._kinds: dict[str, EntryKind | None] = {}

    @property
    def description(self) -> str:
        return self._tree.description

    def kind(self, path: str) -> EntryKind | None:
        if path not in self._kinds:
            self._kinds[path] = self._tree.kind(path)
        return self._kinds[path]

    def files(self, path: str = "") -> list[str]:
        return self._tree.files(path)

    def names(self, path: str = "") -> list[str]:
        return self._tree.names(path)

    def read(self, path: str) -> bytes:
        content = self._contents.get(path)
        if content is None:
            content = self._contents[path] = self._tree.read(path)
        return content

    def object_id(self, path: str = "") -> str:
        return self._tree.object_id(path)

    def materialize(self, destination: Path, path: str = "") -> tuple[EscapingLink, ...]:
        return self._tree.materialize(destination, path)
