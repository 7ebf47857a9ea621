"""Directories' raw tree objects, split into entries without libgit2 parsing them.

A tree diff between neighbouring commits (`controllers/app/commit_files.changed_paths`) reads
each directory whose id differs as raw bytes and splits only the entries between the two
listings' common head and tail. The listings it read are kept (`TreeEntries(keep=...)`), by
tree id, and a `GitTree` given the same `TreeEntries` finds an entry of a directory read there
by a search of its raw bytes instead of having libgit2 inflate and parse the directory again:
after a commit to a 1,000-app repository, the changed app's lookup of `apps/<app>` cost about
0.3 ms, a tenth of a cold app's refresh (bench/bench_refresh.py).
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

import pygit2

__all__ = ["Listing", "TreeEntries"]


@dataclass(frozen=True)
class Listing:
    """A directory's raw tree object and where each entry starts in it, then its length."""

    raw: bytes
    bounds: tuple[int, ...]

    def entries(self, first: int = 0, end: int | None = None) -> list[bytes]:
        """The raw entries from index `first` up to index `end`."""
        stop = len(self.bounds) - 1 if end is None else end
        raw, bounds = self.raw, self.bounds
        return [raw[bounds[i] : bounds[i + 1]] for i in range(first, stop)]

    def find(self, name: bytes) -> tuple[int, bytes] | None:
        """The mode and binary id of the entry called `name`, or None when there is none.
        A search of the raw bytes for ` name\\0`; a match counts only where an entry starts
        right before it with its mode (digits alone), so bytes of a binary id that happen
        to spell the name are passed over."""
        needle = b" " + name + b"\0"
        raw, bounds = self.raw, self.bounds
        at = raw.find(needle)
        while at >= 0:
            index = bisect.bisect_right(bounds, at) - 1
            start = bounds[index]
            if start < at and raw[start:at].isdigit():
                return int(raw[start:at], 8), raw[at + len(needle) : bounds[index + 1]]
            at = raw.find(needle, at + 1)
        return None

    def entry(self, name: str) -> tuple[int, pygit2.Oid] | None:
        """`find` by a name as Python reads it (UTF-8, as pygit2 encodes a lookup)."""
        found = self.find(name.encode("utf-8", "surrogateescape"))
        return None if found is None else (found[0], pygit2.Oid(raw=found[1]))


_EMPTY = Listing(b"", (0,))


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
        self._known: dict[bytes, Listing] = {}
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

    def kept(self, tree: pygit2.Oid) -> Listing | None:
        """The listing of directory `tree` if a walk read it and it is still kept."""
        return self._known.get(tree.raw)

    def _listing(self, repo: pygit2.Repository, tree: pygit2.Oid | None) -> Listing:
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

    def _remember(self, tree: bytes, listing: Listing) -> None:
        if self._keep:
            if len(self._known) >= self._keep:
                del self._known[next(iter(self._known))]
            self._known[tree] = listing


def _split_entries(raw: bytes, id_size: int, name: str) -> Listing:
    # Each entry whole, with its id (20 bytes for SHA-1, 32 for SHA-256), in one C loop.
    found = _whole_entry(id_size).findall(raw)
    if sum(map(len, found)) != len(raw):
        raise ValueError(f"tree {name}: unreadable entries")
    return Listing(raw, (0, *itertools.accumulate(map(len, found))))


_WHOLE_ENTRY: dict[int, re.Pattern[bytes]] = {}


def _whole_entry(id_size: int) -> re.Pattern[bytes]:
    pattern = _WHOLE_ENTRY.get(id_size)
    if pattern is None:
        pattern = _WHOLE_ENTRY[id_size] = re.compile(rb"[0-7]+ [^\0]*\0.{%d}" % id_size, re.S)
    return pattern


def _entries_between(before: Listing, after: Listing) -> tuple[list[bytes], list[bytes]]:
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
    before: Listing, raw: bytes, id_size: int
) -> tuple[Listing, list[bytes], list[bytes]] | None:
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
    tail = before.bounds[end:]
    if shift:  # (an entry's id changed: the names, and so the bounds after it, stay put)
        tail = tuple(map(shift.__add__, tail))
    bounds = before.bounds[:first] + tuple(m.start() for m in middle) + tail
    listing = Listing(raw, bounds)
    was, now = set(before.entries(first, end)), {m.group(0) for m in middle}
    return listing, list(was - now), list(now - was)


def _changed_span(before: Listing, raw: bytes) -> tuple[int, int]:
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
