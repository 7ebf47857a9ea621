"""Render identities kept between commits, carried to a new commit a group at a time.

An app's render identity (its fingerprint: the content ids of everything its render reads,
`SourceReader._fingerprint`) holds at the commits it was computed for, and at any later
commit that changed nothing it reads. For a render bounded to its sources' paths (a directory
source with no link or Jsonnet reaching out) that is one question: did the commit touch a
file at or under any of those paths?

Apps whose sources name the same repositories at the same revisions (the same *refs*) resolve
to the same commits at any moment, so their identities are kept in one `Group` that stands at
those commits. The first member to ask at other commits moves the group: one tree diff for
the pair, then each member reading under a path the diff touched (an index from path to
members) is detached, to compute its identity again, and the group's commits are set to the
new ones. Every other member then finds its identity with the same single comparison a
refresh with nothing changed makes: a commit costs the fleet's untouched apps nothing per app
(until session 9 each compared the commit pair itself and moved its own record, about a
microsecond an app: half a cold app's refresh over 1,000 apps, bench/bench_refresh.py).

A render not bounded to its paths (Helm, Kustomize, plugins, a link leading out) has a group
of its own, with no refs: at other commits it is computed again.

Threads: `headway serve` refreshes an app from one thread only (the manager steps controllers
in turn), but members of one group may be refreshed from different threads. Moves and
membership changes happen under a lock; the lookup takes none. A detached member's record
points to its group no more, and it is detached before the group's commits change, so a
lookup that reads the new commits and then finds the record still in the group has read a
member the move kept (tests/controllers/test_known_identity_threads.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["Group", "IdentityKey", "KeptIdentities", "Refs"]

# What a render's identity is kept under: the app, its destination namespace, its project
# and its sources' parameters (`sources._identity_key`).
IdentityKey = tuple[str, str, str, str]
# Each source's repository URL and revision as written (before resolution).
Refs = tuple[tuple[str, str], ...]

R = TypeVar("R")  # what the tree diff needs besides the commits (the resolved sources)

# (commits before, what resolved them, commits after) -> every `<source index>:<path>` a
# file changed at between them, with every directory above; None when they cannot be compared.
TouchedBetween = Callable[[tuple[str, ...], R, tuple[str, ...]], "frozenset[str] | None"]


class Group:
    """Identities kept at the same commits. `refs` is None for a group of one that never
    moves (a render not bounded to its paths)."""

    __slots__ = ("members", "refs", "shas")

    def __init__(self, shas: tuple[str, ...], refs: Refs | None) -> None:
        self.shas = shas
        self.refs = refs
        # `<source index>:<path>` -> the keys of the members whose render reads under it.
        self.members: dict[str, set[IdentityKey]] = {}


class _Kept:
    """One identity: its fingerprint and paths never change; `group` is set to None when a
    move detaches it (a changed identity is a new record)."""

    __slots__ = ("bounded_to", "fingerprint", "group")

    def __init__(
        self, group: Group | None, fingerprint: str, bounded_to: frozenset[str] | None
    ) -> None:
        self.group = group
        self.fingerprint = fingerprint
        self.bounded_to = bounded_to


class KeptIdentities(Generic[R]):
    """Every app's last render identity, in groups by refs (at most `max_entries`; past it,
    all are let go and computed again)."""

    def __init__(self, touched_between: TouchedBetween[R], *, max_entries: int = 8 * 4096) -> None:
        self._touched_between = touched_between
        self._max = max_entries
        self._kept: dict[IdentityKey, _Kept] = {}
        self._groups: dict[Refs, Group] = {}
        self._lock = threading.Lock()
        self.moves = 0  # group moves made (for tests and benchmarks)
        self.detached = 0  # members a move detached

    def fingerprint(self, key: IdentityKey, shas: tuple[str, ...], resolved: R) -> str | None:
        """The fingerprint kept under `key` if it holds at `shas`, else None."""
        kept = self._kept.get(key)
        if kept is None:
            return None
        group = kept.group
        if group is None:
            return None
        if group.shas == shas and kept.group is group:
            return kept.fingerprint
        if group.refs is None or not self._move(group, resolved, shas):
            return None
        return kept.fingerprint if kept.group is group else None

    def keep(
        self,
        key: IdentityKey,
        *,
        refs: Refs,
        shas: tuple[str, ...],
        fingerprint: str,
        bounded_to: frozenset[str] | None,
        resolved: R,
    ) -> None:
        """Keep `fingerprint` as `key`'s identity at `shas` (replacing any other)."""
        with self._lock:
            if len(self._kept) >= self._max and key not in self._kept:
                self._kept.clear()
                self._groups.clear()
            earlier = self._kept.pop(key, None)
            if earlier is not None:
                self._leave(key, earlier)
            if bounded_to is None:
                self._kept[key] = _Kept(Group(shas, None), fingerprint, None)
                return
            group = self._groups.get(refs)
            if group is not None and group.shas != shas:
                self._move_locked(group, resolved, shas)
                group = self._groups.get(refs)
            if group is None:
                group = self._groups[refs] = Group(shas, refs)
            for path in bounded_to:
                group.members.setdefault(path, set()).add(key)
            self._kept[key] = _Kept(group, fingerprint, bounded_to)

    def forget(self, keep_key: Callable[[IdentityKey], bool]) -> None:
        """Let go of every identity whose key `keep_key` refuses (a hard refresh)."""
        with self._lock:
            for key in [k for k in self._kept if not keep_key(k)]:
                self._leave(key, self._kept.pop(key))

    def _move(self, group: Group, resolved: R, shas: tuple[str, ...]) -> bool:
        with self._lock:
            return self._move_locked(group, resolved, shas)

    def _move_locked(self, group: Group, resolved: R, shas: tuple[str, ...]) -> bool:
        """Move `group` to `shas`, detaching the members whose paths changed; False when the
        group is gone (the commits could not be compared: every member computes again)."""
        if group.shas == shas:
            return True
        if group.refs is None or self._groups.get(group.refs) is not group:
            return False
        touched = self._touched_between(group.shas, resolved, shas)
        if touched is None:
            self._drop(group)
            return False
        self.moves += 1
        paths: Sequence[str] = (
            [p for p in touched if p in group.members]
            if len(touched) <= len(group.members)
            else [p for p in group.members if p in touched]
        )
        for path in paths:
            for key in group.members.pop(path, ()):
                self._detach(key, group)
        group.shas = shas
        return True

    def _detach(self, key: IdentityKey, group: Group) -> None:
        kept = self._kept.get(key)
        if kept is None or kept.group is not group:
            return
        kept.group = None
        self.detached += 1
        self._kept.pop(key)
        self._leave_paths(key, group, kept.bounded_to)

    def _leave(self, key: IdentityKey, kept: _Kept) -> None:
        group = kept.group
        kept.group = None
        if group is not None and group.refs is not None:
            self._leave_paths(key, group, kept.bounded_to)

    @staticmethod
    def _leave_paths(key: IdentityKey, group: Group, paths: frozenset[str] | None) -> None:
        for path in paths or ():
            members = group.members.get(path)
            if members is not None:
                members.discard(key)
                if not members:
                    del group.members[path]

    def _drop(self, group: Group) -> None:
        if group.refs is not None and self._groups.get(group.refs) is group:
            del self._groups[group.refs]
        for keys in group.members.values():
            for key in keys:
                kept = self._kept.get(key)
                if kept is not None and kept.group is group:
                    kept.group = None
                    del self._kept[key]
        group.members.clear()
