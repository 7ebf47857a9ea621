"""What a commit to a local repository changed: the source watcher's edge to Git.

Remembers the commit each ref of a `file://` repository points at; when the refs move, the
files changed between each ref's old and new commit, and the library paths (Helm `file://`
dependencies, Kustomize bases outside the path) the new commits' trees give each source path.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pygit2

from headway.source.errors import PathNotFound
from headway.source.git import local_repo_path
from headway.source.library import library_paths
from headway.source.render import KUSTOMIZATION_FILES
from headway.source.tree import GitTree

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


@dataclass(frozen=True)
class _Listing:
    """A directory's raw tree object and where each entry starts in it, then its length."""

    raw: bytes
    bounds: tuple[int, ...]

    def entries(self, first: int = 0, end: int | None = None) -> list[bytes]:
        """The raw entries from index `first` up to index `end`."""
        stop = len(self.bounds) - 1 if end is None else end
        raw, bounds = self.raw, self.bounds
        return [raw[bounds[i] : bounds[i + 1]] for i in range(first, stop)]


_EMPTY = _Listing(b"", (0,))


class TreeEntries:
    """Directories' raw entries by tree id, read from the object database without libgit2
    parsing them into entry objects; the `keep` directories opened last stay, in the order
    they were opened (a commit's walk needs the new side of the walk before; a tree id names
    its content in any repository). `reads` counts the directories opened.

    Two listings of one directory at two commits share their sorted entries up to the first
    changed one and after the last: the new listing's entries are found by splitting only
    the bytes between the two listings' longest common head and tail (a binary search of
    byte comparisons) and taking the old listing's entry bounds for the rest, instead of
    splitting every entry of a 1,000-entry `apps/` again at each commit."""

    def __init__(self, keep: int = 0) -> None:
        self._keep = keep
        self._known: dict[bytes, _Listing] = {}
        self.reads = 0

    def differing(
        self, repo: pygit2.Repository, old: pygit2.Oid | None, new: pygit2.Oid | None
    ) -> tuple[list[bytes], list[bytes]]:
        """The raw entries (each whole, with its id) only `old` lists, and only `new` lists."""
        before = self._listing(repo, old)
        after = _EMPTY if new is None else self._known.get(new.raw)
        if after is not None:
            return _entries_between(before, after)
        assert new is not None
        raw = self._read_raw(repo, new)
        beside = _listing_beside(before, raw, len(new.raw))
        if beside is None:
            after = _split_entries(raw, len(new.raw), str(new))
            self._remember(new.raw, after)
            return _entries_between(before, after)
        after, only_before, only_after = beside
        self._remember(new.raw, after)
        return only_before, only_after

    def _listing(self, repo: pygit2.Repository, tree: pygit2.Oid | None) -> _Listing:
        if tree is None:
            return _EMPTY
        known = self._known.get(tree.raw)
        if known is None:
            known = _split_entries(self._read_raw(repo, tree), len(tree.raw), str(tree))
            self._remember(tree.raw, known)
        return known

    def _read_raw(self, repo: pygit2.Repository, tree: pygit2.Oid) -> bytes:
        self.reads += 1
        kind, raw = repo.odb.read(tree)
        if kind != pygit2.enums.ObjectType.TREE:
            raise ValueError(f"{tree} is not a tree")
        return bytes(raw)

    def _remember(self, tree: bytes, listing: _Listing) -> None:
        if self._keep:
            if len(self._known) >= self._keep:
                del self._known[next(iter(self._known))]
            self._known[tree] = listing


def _split_entries(raw: bytes, id_size: int, name: str) -> _Listing:
    # Each entry whole, with its id (20 bytes for SHA-1, 32 for SHA-256), in one C loop.
    found = _whole_entry(id_size).findall(raw)
    if sum(map(len, found)) != len(raw):
        raise ValueError(f"tree {name}: unreadable entries")
    return _Listing(raw, (0, *itertools.accumulate(map(len, found))))


_WHOLE_ENTRY: dict[int, re.Pattern[bytes]] = {}


def _whole_entry(id_size: int) -> re.Pattern[bytes]:
    pattern = _WHOLE_ENTRY.get(id_size)
    if pattern is None:
        pattern = _WHOLE_ENTRY[id_size] = re.compile(rb"[0-7]+ [^\0]*\0.{%d}" % id_size, re.S)
    return pattern


def _entries_between(before: _Listing, after: _Listing) -> tuple[list[bytes], list[bytes]]:
    """The entries each listing has and the other lacks, looked for only between the two
    listings' common head and tail (outside, both have the same entries at the same
    bounds); in every entry when the bounds do not line up (each listing split whole)."""
    first, end = _changed_span(before, after.raw)
    start, stop = before.bounds[first], before.bounds[end] + len(after.raw) - len(before.raw)
    new_first = bisect.bisect_left(after.bounds, start)
    new_end = bisect.bisect_left(after.bounds, stop)
    if after.bounds[new_first] == start and after.bounds[new_end] == stop:
        was, now = set(before.entries(first, end)), set(after.entries(new_first, new_end))
    else:
        was, now = set(before.entries()), set(after.entries())
    return list(was - now), list(now - was)


def _listing_beside(
    before: _Listing, raw: bytes, id_size: int
) -> tuple[_Listing, list[bytes], list[bytes]] | None:
    """`raw`'s listing from `before`'s bounds where the two agree, splitting only the bytes
    between, with the entries only `before` has and only `raw` has; None when those bytes
    are not whole entries (then `raw` is split whole)."""
    if not before.raw:
        return None
    first, end = _changed_span(before, raw)
    shift = len(raw) - len(before.raw)
    start, stop = before.bounds[first], before.bounds[end] + shift
    middle = list(_whole_entry(id_size).finditer(raw, start, stop))
    if sum(m.end() - m.start() for m in middle) != stop - start:
        return None
    tail = map(shift.__add__, before.bounds[end:])
    listing = _Listing(raw, (*before.bounds[:first], *(m.start() for m in middle), *tail))
    was, now = set(before.entries(first, end)), {m.group(0) for m in middle}
    return listing, list(was - now), list(now - was)


def _changed_span(before: _Listing, raw: bytes) -> tuple[int, int]:
    """Entry indexes (first, end) of `before` such that `raw` begins with the bytes of
    `before`'s entries up to `first` and ends with those from `end` on."""
    head = _common_head(before.raw, raw)
    tail = _common_tail(before.raw, raw, min(len(before.raw), len(raw)) - head)
    first = bisect.bisect_right(before.bounds, head) - 1
    end = bisect.bisect_left(before.bounds, len(before.raw) - tail)
    return max(first, 0), max(end, first, 0)


def _common_head(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix: a binary search of slice comparisons."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


def _common_tail(a: bytes, b: bytes, limit: int) -> int:
    """The length of the longest common suffix, at most `limit`."""
    low, high = 0, limit
    if a[len(a) - high :] == b[len(b) - high :]:
        return high
    while high - low > 1:  # the last `low` bytes agree, the last `high` do not
        middle = (low + high) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle
    return low


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
