"""A directory over libgit2's default 4 KB cache limit (a 1,000-app `apps/`) stays in its
object cache once read, so the tree diff's raw read and the changed app's lookup of the same
commit inflate it once (docs/performance.md, "Warm refresh, third pass")."""

from __future__ import annotations

from pathlib import Path

import pygit2

from headway.source.git import LARGEST_CACHED_TREE, GitCache


def _large_directory(root: Path) -> pygit2.Oid:
    repo = pygit2.init_repository(str(root / "repo.git"), bare=True)
    builder = repo.TreeBuilder()
    blob = repo.create_blob(b"kind: ConfigMap\n")
    for n in range(400):
        builder.insert(f"app-{n:04d}", blob, pygit2.enums.FileMode.BLOB)
    return builder.write()


def _cached_after_read(root: Path, tree: pygit2.Oid) -> int:
    """The cache's growth when a new handle on the repository reads the tree's raw data."""
    repo = pygit2.Repository(str(root / "repo.git"))
    before = pygit2.settings.cached_memory[0]
    kind, raw = repo.odb.read(tree)
    assert kind == pygit2.enums.ObjectType.TREE and len(raw) > 4096
    grown: int = pygit2.settings.cached_memory[0] - before
    del repo
    return grown


def test_a_large_directory_read_once_stays_in_the_object_cache(tmp_path: Path) -> None:
    tree = _large_directory(tmp_path)
    try:
        pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, 4096)  # the default
        assert _cached_after_read(tmp_path, tree) == 0
        GitCache(tmp_path / "cache")
        assert _cached_after_read(tmp_path, tree) > 4096
    finally:
        pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, LARGEST_CACHED_TREE)
