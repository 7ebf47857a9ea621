"""What a commit to a local repository changed: the source watcher's edge to Git.

Remembers the commit each ref of a `file://` repository points at; when the refs move, the
files changed between each ref's old and new commit, and the library paths (Helm `file://`
dependencies, Kustomize bases outside the path) the new commits' trees give each source path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pygit2

from headway.source.errors import PathNotFound
from headway.source.git import local_repo_path
from headway.source.library import library_paths
from headway.source.render import KUSTOMIZATION_FILES
from headway.source.tree import GitTree
from headway.source.tree_listings import TreeEntries

__all__ = ["CommitFiles", "TreeEntries", "changed_paths"]


class CommitFiles:
    def __init__(self) -> None:
        self._refs: dict[str, dict[str, str]] = {}
        self._trees: dict[str, list[GitTree]] = {}
        self._renamed: set[str] = set()  # urls whose last `changed` saw a ref come or go

    def remember(self, url: str) -> None:
        """Note where `url`'s refs point now (a baseline for the next `changed`), and keep
        their trees for `library`."""
        if url not in self._refs:
            self._refs[url] = _ref_commits(url) or {}
            repo = _open(url)
            if repo is not None:
                self._keep_trees(repo, url, self._refs[url])

    def refs_came_or_went(self, url: str) -> bool:
        """Whether the last `changed` found a ref of `url` created or deleted: library
        paths may then differ anywhere (they are read from every ref's tree)."""
        return url in self._renamed

    def changed(self, url: str) -> tuple[str, ...] | None:
        """Files changed since the refs were last noted (None: could not tell)."""
        repo = _open(url)
        before = self._refs.get(url)
        after = _ref_commits(url)
        if repo is None or before is None or after is None:
            return None
        self._refs[url] = after
        if set(before) != set(after):
            self._renamed.add(url)
        else:
            self._renamed.discard(url)
        files: set[str] = set()
        for name, new in after.items():
            old = before.get(name)
            if old is None or old == new:
                continue
            files |= changed_paths(repo, repo[old].peel(pygit2.Tree), repo[new].peel(pygit2.Tree))
        self._keep_trees(repo, url, after)
        return tuple(sorted(files))

    def _keep_trees(self, repo: pygit2.Repository, url: str, refs: dict[str, str]) -> None:
        trees = {oid: repo[oid].peel(pygit2.Tree) for oid in set(refs.values())}
        self._trees[url] = [GitTree(repo, tree, f"{url}@{oid[:12]}") for oid, tree in trees.items()]

    def library(self, url: str, paths: Iterable[str]) -> tuple[str, ...]:
        """Paths outside `paths` their renders read, in the trees of the last `changed`."""
        found: dict[str, None] = {}
        for tree in self._trees.get(url, []):
            for path in paths:
                if _may_climb_out(tree, path.strip("/")):
                    found.update(dict.fromkeys(library_paths(tree, path.strip("/"))))
        return tuple(found)


def changed_paths(
    repo: pygit2.Repository,
    old: pygit2.Tree | None,
    new: pygit2.Tree | None,
    *,
    entries: TreeEntries | None = None,
) -> set[str]:
    """The paths of the files (and links, submodules) that differ between two trees: what
    `diff_to_tree` lists as each delta's old and new path, without its content checks.
    Opens only the directories whose ids differ, where libgit2's diff opened every one
    (10,000 app directories: 0.14 s), and within a directory looks only at the entries
    between the longest common head and tail of the two raw listings (`TreeEntries`).
    `entries` keeps directories read by an earlier walk (the old side of a commit is the
    new side of the commit before it)."""
    reader = entries if entries is not None else TreeEntries()
    return _changed_under(
        repo, reader, None if old is None else old.id, None if new is None else new.id, ""
    )


def _changed_under(
    repo: pygit2.Repository,
    entries: TreeEntries,
    old: pygit2.Oid | None,
    new: pygit2.Oid | None,
    prefix: str,
) -> set[str]:
    only_before, only_after = entries.differing(repo, old, new)
    was, now = _by_name(only_before), _by_name(only_after)
    found: set[str] = set()
    for name in was.keys() | now.keys():
        old_dir, new_dir = _subtree_id(was.get(name)), _subtree_id(now.get(name))
        if old_dir is not None or new_dir is not None:
            found |= _changed_under(repo, entries, old_dir, new_dir, f"{prefix}{name}/")
        if (name in was and old_dir is None) or (name in now and new_dir is None):
            found.add(prefix + name)  # a file, link or submodule on either side
    return found


# A raw tree entry's head: octal mode, a space, the name, a NUL (then the binary id).
_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0", re.S)


def _by_name(entries: list[bytes]) -> dict[str, tuple[bytes, bytes]]:
    """name -> (mode, binary id) of each raw entry."""
    found = {}
    for entry in entries:
        head = _ENTRY.match(entry)
        assert head is not None  # read by _split_entries
        found[head.group(2).decode("utf-8", "replace")] = (head.group(1), entry[head.end() :])
    return found


def _subtree_id(entry: tuple[bytes, bytes] | None) -> pygit2.Oid | None:
    if entry is None or entry[0] != b"40000":
        return None
    return pygit2.Oid(raw=entry[1])


def _may_climb_out(tree: GitTree, path: str) -> bool:
    """Whether the directory holds a Chart.yaml or a kustomization: a few lookups, where
    parsing through `library_paths` for every app of a 1,000-app repository cost a second.
    Through `GitTree`, which parses each directory once: a lookup by path on the raw tree
    parsed the whole `apps/` again for every app (3,000 apps: 5-11 s from commit to app)."""
    try:
        if tree.kind(path) != "dir":
            return False
    except PathNotFound:  # a path climbing out of the repository: the render refuses it
        return False
    prefix = f"{path}/" if path else ""
    return any(tree.kind(prefix + name) is not None
               for name in ("Chart.yaml", *KUSTOMIZATION_FILES))


def _open(url: str) -> pygit2.Repository | None:
    root = local_repo_path(url)
    if root is None:
        return None
    try:
        return pygit2.Repository(str(root))
    except pygit2.GitError:
        return None


def _ref_commits(url: str) -> dict[str, str] | None:
    repo = _open(url)
    if repo is None:
        return None
    found: dict[str, str] = {}
    for name in repo.references:
        try:
            target = repo.lookup_reference(name).resolve().peel(pygit2.Commit)
        except (pygit2.GitError, KeyError, ValueError):
            continue
        found[name] = str(target.id)
    return found
