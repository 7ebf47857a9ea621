"""The source watcher's walk of two commits' trees names the same changed paths as libgit2's
tree diff (each delta's old and new path), over edits, additions, deletions, a directory
turned into a file and back, an executable bit, a link and a submodule; it opens only the
directories whose ids differ, where the diff opened every one."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from headway.controllers.app.commit_files import TreeEntries, changed_paths

BLOB = pygit2.enums.FileMode.BLOB
STEPS: list[dict[str, tuple[int, str] | None]] = [
    {"apps/a/cm.yaml": (BLOB, "v: 2\n")},
    {"apps/c/deep/er/x.yaml": (BLOB, "x\n"), "README.md": (BLOB, "hi\n")},
    {"apps/b/cm.yaml": None},
    {"apps/a/cm.yaml": None, "apps/a": (BLOB, "now a file\n")},
    {"apps/a": None, "apps/a/cm.yaml": (BLOB, "a dir again\n")},
    {"run.sh": (pygit2.enums.FileMode.BLOB_EXECUTABLE, "echo\n")},
    {"link": (pygit2.enums.FileMode.LINK, "apps/a")},
    {"vendor/lib": (pygit2.enums.FileMode.COMMIT, "")},
]


def commit(repo: pygit2.Repository, files: dict[str, tuple[int, str] | None]) -> pygit2.Tree:
    index = pygit2.Index()
    if not repo.head_is_unborn:
        index.read_tree(repo.head.peel(pygit2.Tree))
    for path, entry in files.items():
        if entry is None:
            index.remove(path)
            continue
        mode, text = entry
        oid = (repo.create_blob(text.encode()) if mode != pygit2.enums.FileMode.COMMIT
               else pygit2.Oid(hex="1" * 40))
        index.add(pygit2.IndexEntry(path, oid, mode))
    sig = pygit2.Signature("t", "t@example.com")
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", sig, sig, "c", index.write_tree(repo), parents)
    return repo.head.peel(pygit2.Tree)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "r.git"), bare=True)


def test_the_walk_names_what_the_diff_names(repo: pygit2.Repository) -> None:
    tree = commit(repo, {"apps/a/cm.yaml": (BLOB, "v: 1\n"), "apps/b/cm.yaml": (BLOB, "b\n"),
                         "run.sh": (BLOB, "echo\n")})
    kept = TreeEntries(keep=4)  # directories kept from one walk to the next, and evicted
    for files in STEPS:
        before, tree = tree, commit(repo, files)
        diff = before.diff_to_tree(tree)
        expected = {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}
        assert changed_paths(repo, before, tree) == expected, files
        assert changed_paths(repo, before, tree, entries=kept) == expected, files
        assert changed_paths(repo, before, before) == set()


def test_the_walk_opens_only_directories_whose_ids_differ(repo: pygit2.Repository) -> None:
    before = commit(repo, {f"apps/app-{i:03d}/cm.yaml": (BLOB, f"{i}\n") for i in range(300)})
    after = commit(repo, {"apps/app-007/cm.yaml": (BLOB, "changed\n")})
    entries = TreeEntries()
    assert changed_paths(repo, before, after, entries=entries) == {"apps/app-007/cm.yaml"}
    assert entries.reads == 6  # the roots, apps/ and apps/app-007/, old and new


def test_kept_directories_are_not_read_again(repo: pygit2.Repository) -> None:
    """The next commit's walk reads only the new side: the old one was this walk's new."""
    first = commit(repo, {f"apps/app-{i:03d}/cm.yaml": (BLOB, f"{i}\n") for i in range(30)})
    second = commit(repo, {"apps/app-007/cm.yaml": (BLOB, "changed\n")})
    third = commit(repo, {"apps/app-008/cm.yaml": (BLOB, "changed too\n")})
    entries = TreeEntries(keep=8)
    assert changed_paths(repo, first, second, entries=entries) == {"apps/app-007/cm.yaml"}
    reads = entries.reads
    assert changed_paths(repo, second, third, entries=entries) == {"apps/app-008/cm.yaml"}
    assert entries.reads - reads == 4  # the new root, apps/, and apps/app-008/ on each side
    assert changed_paths(repo, first, third) == {"apps/app-007/cm.yaml", "apps/app-008/cm.yaml"}
