"""A submodule under a directory source's path is not content of the repository (its commit
lives in another one, and is not in this repository's objects): the render lists the files
beside it, recursing or not, and reading it (through a link, say) finds no file, where both
stopped with a KeyError traceback."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from headway.source.errors import PathNotFound
from headway.source.tree import GitTree


def tree_with_submodule(tmp_path: Path) -> GitTree:
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    index = pygit2.Index()
    blob = repo.create_blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    index.add(pygit2.IndexEntry("apps/web/cm.yaml", blob, pygit2.enums.FileMode.BLOB))
    index.add(pygit2.IndexEntry("apps/web/vendor", pygit2.Oid(hex="ab" * 20),
                                pygit2.enums.FileMode.COMMIT))  # fmt: skip
    tree = repo[index.write_tree(repo)].peel(pygit2.Tree)
    return GitTree(repo, tree, "r@test")


@pytest.mark.parametrize("path", ["apps/web", "apps", ""])
def test_a_submodule_is_skipped_by_the_walk(tmp_path: Path, path: str) -> None:
    assert tree_with_submodule(tmp_path).files(path) == ["apps/web/cm.yaml"]


def test_a_submodule_is_not_a_file_to_read(tmp_path: Path) -> None:
    tree = tree_with_submodule(tmp_path)
    with pytest.raises(PathNotFound):
        tree.read("apps/web/vendor")


def test_a_submodule_is_neither_file_nor_directory(tmp_path: Path) -> None:
    assert tree_with_submodule(tmp_path).kind("apps/web/vendor") is None
