"""Listing a commit's directory and asking what a path is read tree entries only: no file's
content is loaded (inflated) until it is read. A render lists its path, asks its kind, then
reads each file: the listing loaded every blob once more (bench/bench_refresh.py, the changed
app's refresh). A link is a file (its target is read through), a submodule is nothing here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from headway.source.tree import GitTree


class _CountingRepository:
    """A repository whose object lookups are recorded by the type of what they return."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self.loaded: list[str] = []

    def __getitem__(self, oid: pygit2.Oid) -> Any:
        found = self._repo[oid]
        self.loaded.append(type(found).__name__)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


def _commit_tree(root: Path) -> tuple[pygit2.Repository, pygit2.Tree]:
    repo = pygit2.init_repository(str(root / "repo.git"), bare=True)
    blob = repo.create_blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    link = repo.create_blob(b"a.yaml")
    sub = repo.TreeBuilder()
    sub.insert("b.yaml", blob, pygit2.enums.FileMode.BLOB)
    app = repo.TreeBuilder()
    app.insert("a.yaml", blob, pygit2.enums.FileMode.BLOB)
    app.insert("run.sh", blob, pygit2.enums.FileMode.BLOB_EXECUTABLE)
    app.insert("alias.yaml", link, pygit2.enums.FileMode.LINK)
    app.insert("sub", sub.write(), pygit2.enums.FileMode.TREE)
    app.insert("module", pygit2.Oid(hex="1" * 40), pygit2.enums.FileMode.COMMIT)
    top = repo.TreeBuilder()
    top.insert("app", app.write(), pygit2.enums.FileMode.TREE)
    tree = repo[top.write()]
    assert isinstance(tree, pygit2.Tree)
    return repo, tree


def test_listing_and_kinds_load_no_file(tmp_path: Path) -> None:
    repo, tree = _commit_tree(tmp_path)
    counting = _CountingRepository(repo)
    listed = GitTree(counting, tree, "commit")  # type: ignore[arg-type]
    assert listed.files("app") == ["app/a.yaml", "app/alias.yaml", "app/run.sh", "app/sub/b.yaml"]
    assert [listed.kind(p) for p in ("app/a.yaml", "app/alias.yaml", "app/sub", "app/module")] == [
        "file",
        "file",
        "dir",
        None,
    ]
    assert (listed.kind("app/missing"), listed.kind("")) == (None, "dir")
    assert "Blob" not in counting.loaded, counting.loaded
    assert listed.read("app/alias.yaml") == listed.read("app/a.yaml")  # read loads them
    assert "Blob" in counting.loaded


def test_a_path_asked_again_is_looked_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A render asks what its path is, lists it, asks for its id and reads its files: each
    through the same lookup. The last entries found are kept (a few: a cold pass asks one
    commit's tree for every app's paths), and the answers stay those of a fresh tree."""
    repo, tree = _commit_tree(tmp_path)
    lookups: list[str] = []
    look_up = GitTree._look_up

    def counted(self: GitTree, clean: str) -> object:
        lookups.append(clean)
        return look_up(self, clean)

    monkeypatch.setattr(GitTree, "_look_up", counted)
    listed = GitTree(repo, tree, "commit")
    for _ in range(3):
        assert listed.kind("app/a.yaml") == "file"
        assert listed.object_id("app/a.yaml") == str(tree["app/a.yaml"].id)
    assert lookups.count("app/a.yaml") == 1
    paths = [f"app/missing-{n}" for n in range(100)] + ["app/sub/b.yaml", "app/module"]
    for _ in range(2):  # more than are kept: the first ones are looked up again, alike
        assert [listed.kind(p) for p in paths] == [None] * 100 + ["file", None]
    assert listed.read("app/sub/b.yaml") == GitTree(repo, tree, "fresh").read("app/sub/b.yaml")
