"""The source watcher's walk of two commits' trees names the same changed paths as libgit2's
tree diff (each delta's old and new path), over edits, additions, deletions, a directory
turned into a file and back, an executable bit, a link and a submodule; it opens only the
directories whose ids differ, where the diff opened every one."""

from __future__ import annotations

import random
from pathlib import Path

import pygit2
import pytest

from headway.controllers.app.commit_files import changed_paths
from headway.source.tree_listings import TreeEntries

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


# Names that sort next to each other (a prefix, a dash, a dot, a longer name), so that two
# listings share long heads and tails and differ in one entry among neighbours.
NAMES = ["a", "a-b", "a.b", "a0", "ab", "b", "app-0001", "app-0010", "app-0100", "z"]
MODES = [BLOB, BLOB, BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE, pygit2.enums.FileMode.LINK,
         pygit2.enums.FileMode.COMMIT]


def random_change(
    rnd: random.Random, files: dict[str, tuple[int, str]]
) -> dict[str, tuple[int, str] | None]:
    """Add, edit, remove or rename a file, change its mode, or turn a directory into a file."""
    path = "/".join(rnd.choice(NAMES) for _ in range(rnd.randint(1, 3)))
    action = rnd.choice(["write", "write", "remove", "rename", "mode", "flatten"])
    if action in ("remove", "rename", "mode") and files:
        old = rnd.choice(sorted(files))
        if action == "remove":
            return {old: None}
        if action == "mode":
            return {old: (rnd.choice(MODES), files[old][1])}
        return {old: None, path: files[old]}
    if action == "flatten" and files:  # a directory (and all below it) becomes one file
        directory = rnd.choice(sorted(files)).rpartition("/")[0]
        if directory:
            gone: dict[str, tuple[int, str] | None] = {
                p: None for p in files if p.startswith(directory + "/")
            }
            return {**gone, directory: (BLOB, "flat\n")}
    return {path: (rnd.choice(MODES), f"{rnd.random()}\n")}


def commit_all(repo: pygit2.Repository, files: dict[str, tuple[int, str]]) -> pygit2.Tree:
    """A commit holding exactly `files`."""
    index = pygit2.Index()
    for path, (mode, text) in files.items():
        oid = (repo.create_blob(text.encode()) if mode != pygit2.enums.FileMode.COMMIT
               else pygit2.Oid(hex=f"{len(text):040x}"))
        index.add(pygit2.IndexEntry(path, oid, mode))
    tree = index.write_tree(repo)
    return repo[tree].peel(pygit2.Tree)


def without_conflicts(
    files: dict[str, tuple[int, str]], change: dict[str, tuple[int, str] | None]
) -> dict[str, tuple[int, str] | None]:
    """`change`, with every existing file that a new path would nest under or over removed
    (Git cannot hold `a` as a file and `a/b` at once)."""
    out = dict(change)
    for path, entry in change.items():
        if entry is None:
            continue
        for existing in files:
            if existing != path and (
                existing.startswith(path + "/") or path.startswith(existing + "/")
            ):
                out.setdefault(existing, None)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_random_commits_name_what_the_diff_names(repo: pygit2.Repository, seed: int) -> None:
    """Over random commits to a repository of neighbouring names, the walk - with listings
    taken from the walk before (only the bytes between two listings' common head and tail
    split) and without - names what libgit2's diff names, commit after commit and across
    several commits at once."""
    rnd = random.Random(seed)
    files = {f"apps/{n}/cm.yaml": (BLOB, f"{n}\n") for n in NAMES}
    files.update({f"{n}.yaml": (BLOB, n) for n in NAMES[:5]})
    trees = [commit_all(repo, files)]
    kept = TreeEntries(keep=32)
    for _ in range(60):
        change = without_conflicts(files, random_change(rnd, files))
        for path, entry in change.items():
            if entry is None:
                files.pop(path, None)
            else:
                files[path] = entry
        trees.append(commit_all(repo, files))
        before, after = trees[-2], trees[-1]
        expected = {p for d in before.diff_to_tree(after).deltas
                    for p in (d.old_file.path, d.new_file.path)}
        assert changed_paths(repo, before, after, entries=kept) == expected, change
        assert changed_paths(repo, before, after) == expected, change
        earlier = rnd.choice(trees[:-1])
        expected = {p for d in earlier.diff_to_tree(after).deltas
                    for p in (d.old_file.path, d.new_file.path)}
        assert changed_paths(repo, earlier, after, entries=kept) == expected
        assert changed_paths(repo, after, earlier, entries=kept) == expected
