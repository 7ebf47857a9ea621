"""A `GitTree` given the raw directory listings a tree diff kept (`tree_listings`) answers
every lookup as one that parses each directory through libgit2: over random commits to a
repository of neighbouring names (prefixes of each other, files, links, submodules,
directories turned into files), for paths that exist, paths that do not and paths under a
file. A listing's search passes over bytes of a binary id that spell a name."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pygit2
import pytest

from headway.controllers.app.commit_files import changed_paths
from headway.source.errors import PathNotFound
from headway.source.tree import GitTree
from headway.source.tree_listings import Listing, TreeEntries

BLOB = pygit2.enums.FileMode.BLOB
LINK = pygit2.enums.FileMode.LINK
COMMIT = pygit2.enums.FileMode.COMMIT
MODES = [BLOB, BLOB, BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE, LINK, COMMIT]
Files = dict[str, tuple[pygit2.enums.FileMode, str]]
NAMES = ["a", "a-1", "a.b", "a0", "ab", "apps", "b", "web", "web-2", "x y"]


def tree_of(repo: pygit2.Repository, files: Files) -> pygit2.Tree:
    index = pygit2.Index()
    for path, (mode, text) in files.items():
        oid = (repo.create_blob(text.encode()) if mode != COMMIT
               else pygit2.Oid(hex=f"{len(text) + 1:040x}"))
        index.add(pygit2.IndexEntry(path, oid, mode))
    return repo[index.write_tree(repo)].peel(pygit2.Tree)


def change(rnd: random.Random, files: Files) -> None:
    path = "/".join(rnd.choice(NAMES) for _ in range(rnd.randint(1, 3)))
    action = rnd.choice(["write", "write", "remove", "flatten"])
    if action == "remove" and files:
        files.pop(rnd.choice(sorted(files)))
        return
    if action == "flatten" and files:
        directory = rnd.choice(sorted(files)).rpartition("/")[0]
        if directory:
            for gone in [p for p in files if p.startswith(directory + "/")]:
                files.pop(gone)
            path = directory
    for existing in list(files):  # Git cannot hold `a` as a file and `a/b` at once
        nested = existing.startswith(path + "/") or path.startswith(existing + "/")
        if existing != path and nested:
            files.pop(existing)
    mode = rnd.choice(MODES)
    files[path] = (mode, "web" if mode == LINK else f"{rnd.random()}\n")


def answer(tree: GitTree, ask: str, path: str) -> Any:
    try:
        result = getattr(tree, ask)(path)
    except PathNotFound as err:
        return ("PathNotFound", str(err))
    return result


def queries(files: Files) -> list[str]:
    paths = set(files) | {"", "nope", "apps/nope", "a/b/c/d"}
    for path in files:
        parts = path.split("/")
        paths.update("/".join(parts[:n]) for n in range(1, len(parts)))
        paths.add(f"{path}/under")
    return sorted(paths)


@pytest.mark.parametrize("seed", range(5))
def test_lookups_through_kept_listings_answer_as_parsed_directories(
    tmp_path: Path, seed: int
) -> None:
    rnd = random.Random(seed)
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    files = {f"apps/{n}/cm.yaml": (BLOB, f"{n}\n") for n in NAMES}
    kept = TreeEntries(keep=64)
    before = tree_of(repo, files)
    searched = 0
    for _ in range(25):
        change(rnd, files)
        after = tree_of(repo, files)
        changed_paths(repo, before, after, entries=kept)
        listed = GitTree(repo, after, "r@after", listings=kept)
        parsed = GitTree(repo, after, "r@after")
        for path in queries(files):
            for ask in ("kind", "object_id", "read", "names", "files"):
                got = answer(listed, ask, path)
                assert got == answer(parsed, ask, path), (ask, path)
        searched += sum(1 for d in ("apps", "a", "web") if d not in listed._directories)
        before = after
    assert searched  # the listings were searched, not only libgit2's parse


def test_the_changed_apps_lookup_reads_no_directory_the_diff_read(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    files = {f"apps/app-{i:03d}/all.yaml": (BLOB, f"{i}\n") for i in range(300)}
    before = tree_of(repo, files)
    files["apps/app-007/all.yaml"] = (BLOB, "changed\n")
    after = tree_of(repo, files)
    kept = TreeEntries(keep=64)
    changed_paths(repo, before, after, entries=kept)
    tree = GitTree(repo, after, "after", listings=kept)
    assert tree.read("apps/app-007/all.yaml") == b"changed\n"
    assert tree.object_id("apps/app-299") == str(after["apps/app-299"].id)
    assert tree.kind("apps/app-300") is None
    assert "apps" not in tree._directories  # found in the diff's bytes, not parsed again


def test_a_path_under_a_submodule_is_no_content(tmp_path: Path) -> None:
    """(Until session 9 a lookup below a submodule raised KeyError: its commit is in another
    repository.)"""
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    tree = GitTree(repo, tree_of(repo, {"vendor/lib": (COMMIT, "")}), "r@c")
    assert tree.kind("vendor/lib/x") is None
    with pytest.raises(PathNotFound):
        tree.read("vendor/lib/x")


def test_a_listing_passes_over_an_id_that_spells_a_name() -> None:
    spelled = b"\x01 web\x00" + b"\x02" * 14  # 20 bytes of a binary id containing " web\0"
    raw = b"100644 a\x00" + spelled + b"40000 web\x00" + b"\x03" * 20
    listing = Listing(raw, (0, 29, len(raw)))
    assert listing.find(b"web") == (0o40000, b"\x03" * 20)
    assert listing.find(b"we") is None and listing.find(b"a") == (0o100644, spelled)
