"""The edit that brings an Application's source back to what it was at an earlier revision.

A rollback to revision R must leave Git saying what the cluster now runs, or automated sync
would sync the branch tip again. The smallest edit that makes the source render as it did at
R is: every file the Application reads (its path, recursively, the directories its
kustomizations reach, its Helm value files) that differs between R and the tip gets R's
bytes back — a file added since R is deleted, one removed since R comes back. Files the
Application does not read stay as they are at the tip, so other applications' changes in the
same repository are not touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2

from headway.source.image_history import PathScope

__all__ = ["RestoreEdit", "restore_edit"]


@dataclass(frozen=True)
class RestoreEdit:
    """path -> the bytes it had at the target revision (None: it did not exist then)."""

    edits: dict[str, bytes | None]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted(self.edits))


def _covers(scope: PathScope, path: str) -> bool:
    """Every file under a scope directory counts (a chart's templates, a .json manifest),
    not only YAML: any of them can change what the source renders."""
    if path in scope.files:
        return True
    return any(d in ("", ".") or path.startswith(d.rstrip("/") + "/") for d in scope.directories)


def _blobs(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[str]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        obj = repo[entry.id]
        if isinstance(obj, pygit2.Tree):
            yield from _blobs(repo, obj, path + "/")
        elif isinstance(obj, pygit2.Blob):
            yield path


def _bytes_at(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        obj = repo[tree[path].id]
    except KeyError:
        return None
    return bytes(obj.data) if isinstance(obj, pygit2.Blob) else None


def restore_edit(
    repo: pygit2.Repository, *, tip: str, target: str, scopes: tuple[PathScope, ...]
) -> RestoreEdit:
    """The files in any of `scopes` whose bytes differ between `target` and `tip`, with the
    bytes they had at `target`."""
    tip_tree = repo[tip].peel(pygit2.Commit).tree
    target_tree = repo[target].peel(pygit2.Commit).tree
    paths = {*_blobs(repo, tip_tree), *_blobs(repo, target_tree)}
    edits: dict[str, bytes | None] = {}
    for path in sorted(paths):
        if not any(_covers(scope, path) for scope in scopes):
            continue
        wanted = _bytes_at(repo, target_tree, path)
        if wanted != _bytes_at(repo, tip_tree, path):
            edits[path] = wanted
    return RestoreEdit(edits)
