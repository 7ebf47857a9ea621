"""The reporter a schema walk writes to, and how cross-field checks see a mapping.

A `Reporter` collects one document's diagnostics, each located by its field path. The
cross-field checks of a table (`schema.Check`) run on a mapping whose misshapen fields
were taken out (`run_checks`), so each check may rely on every field's declared shape.

Purely computational: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, PathPart, format_path

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

__all__ = ["Check", "Path", "Reporter"]

Path = tuple[PathPart, ...]


class Reporter:
    """Collects diagnostics for one document, each located by its field path."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.diagnostics: list[Diagnostic] = []
        # Where a value does not have its declared shape (not what cross-field checks find).
        self.misshapen: list[Path] = []
        self.errors = 0  # how many of `diagnostics` are errors
        self._checks_running = 0

    def error(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.ERROR))
        self.errors += 1
        if not self._checks_running:
            self.misshapen.append(tuple(path))

    def warning(self, path: Sequence[PathPart], message: str) -> None:
        self.diagnostics.append(self.document.diagnostic(path, message, Severity.WARNING))

    def mark(self) -> tuple[int, int, int]:
        """Where the reports stand now, for `said_since` and `rewind`."""
        return len(self.diagnostics), len(self.misshapen), self.errors

    def said_since(self, mark: tuple[int, int, int]) -> bool:
        """Whether anything was reported since `mark`."""
        return len(self.diagnostics) != mark[0] or len(self.misshapen) != mark[1]

    def rewind(self, mark: tuple[int, int, int]) -> None:
        """Forget everything reported since `mark` (a walk about to report it again)."""
        del self.diagnostics[mark[0] :]
        del self.misshapen[mark[1] :]
        self.errors = mark[2]

    def run_checks(self, checks: Sequence[Check], value: Any, *, path: Path) -> None:
        """Run cross-field checks on the mapping at `path`, which may hold misshapen fields.

        The checks see the mapping without those fields, so they can rely on each field's
        declared shape. What they then say about a removed field is dropped (its shape error
        was reported), and so is all a check says once it asked for a removed field: it
        reasoned from a picture the user has still to fix.
        """
        depth = len(path)
        misshapen = [p for p in self.misshapen if p[:depth] == path] if self.misshapen else []
        if not misshapen:  # nothing to hide from the checks, nothing of theirs to drop
            self._checks_running += 1
            try:
                for check in checks:
                    check(value, path, self)
            finally:
                self._checks_running -= 1
            return
        asked: list[str] = []
        shaped = _without(value, [p[len(path) :] for p in misshapen], asked)
        self._checks_running += 1
        try:
            for check in checks:
                found_before, asked[:] = len(self.diagnostics), []
                check(shaped, path, self)
                self._drop_misleading(found_before, misshapen, bool(asked))
        finally:
            self._checks_running -= 1

    def _drop_misleading(self, start: int, misshapen: Sequence[Path], asked: bool) -> None:
        if asked:
            del self.diagnostics[start:]
        else:
            fields = [format_path(bad) for bad in misshapen]
            self.diagnostics[start:] = [
                diagnostic
                for diagnostic in self.diagnostics[start:]
                if not any(_inside(diagnostic.field, field) for field in fields)
            ]
        self.errors = sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def has_errors(self) -> bool:
        return self.errors > 0


Check = Callable[[Mapping[str, Any], Path, Reporter], None]


class _Shaped(dict[str, Any]):
    """A mapping whose misshapen fields were removed; notes when a check asks for one."""

    def __init__(self, items: dict[str, Any], removed: set[str], asked: list[str]) -> None:
        super().__init__(items)
        self._removed, self._asked = removed, asked

    def _note(self, key: object) -> None:
        if key in self._removed:
            self._asked.append(str(key))

    def _note_all(self) -> None:  # looking at every field looks at the removed ones too
        self._asked.extend(self._removed)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

    def __iter__(self) -> Iterator[str]:
        self._note_all()
        return super().__iter__()

    def keys(self) -> dict_keys[str, Any]:
        self._note_all()
        return super().keys()

    def values(self) -> dict_values[str, Any]:
        self._note_all()
        return super().values()

    def items(self) -> dict_items[str, Any]:
        self._note_all()
        return super().items()

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)


def _without(value: Any, paths: Sequence[Path], asked: list[str]) -> Any:
    """`value` without the mapping key holding each path (a path into a list removes the
    whole list: removing one element would shift the indices the checks report)."""
    if not paths:
        return value
    removals: dict[PathPart, Any] = {}
    for relative in paths:
        parts = list(relative)
        while parts and not isinstance(parts[-1], str):
            parts.pop()
        node = removals
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if child is True:
                break
            node = child
        else:
            if parts:
                node[parts[-1]] = True
    return _pruned(value, removals, asked)


def _pruned(value: Any, removals: dict[PathPart, Any], asked: list[str]) -> Any:
    if isinstance(value, Mapping):
        removed = {str(key) for key, sub in removals.items() if sub is True}
        kept = {
            key: _pruned(item, removals[key], asked) if _descend(removals, key) else item
            for key, item in value.items()
            if key not in removed
        }
        return _Shaped(kept, removed, asked)
    if isinstance(value, list):
        return [
            _pruned(item, removals[i], asked) if _descend(removals, i) else item
            for i, item in enumerate(value)
        ]
    return value


def _descend(removals: dict[PathPart, Any], part: PathPart) -> bool:
    return isinstance(removals.get(part), dict)


def _inside(path: str, field: str) -> bool:
    """Whether the dotted `path` is `field` or inside it."""
    return path == field or path.startswith((f"{field}.", f"{field}[", f'{field}["'))
