"""The branch a revert is written to: a local repository (committed in place) or a remote one
(built on the fetched tip in Headway's Git cache, then pushed).

A local repository is one named by a `file://` URL or a plain path, as the Application
controller reads it (`local_repo_path`). Committing there moves `refs/heads/<branch>` directly,
as a compare-and-swap: the ref is locked (Git's own `<ref>.lock`, which `git commit`, `git
push` into the repository and other libgit2 writers honour too), compared with the tip the
commit was built on, and moved only if it is still that tip; a branch that moved, or that
another writer holds locked, is `BranchMoved` and the caller builds the commit again. When
that branch is checked out in a working tree, the tree and index follow when they were clean
(a safe checkout), so `git status` in the user's clone stays clean.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import pygit2
from pygit2.enums import CheckoutStrategy

from headway.source.errors import SourceError, UnknownRevision
from headway.source.git import GitCache, GitRepository, local_repo_path
from headway.source.git_commits import BotIdentity, build_edit_commit

__all__ = ["BranchMoved", "BranchWriter", "LocalBranch", "RemoteBranch", "open_branch"]

log = logging.getLogger(__name__)


class BranchMoved(SourceError):
    """The branch tip changed while the commit was being built: build it again."""


class BranchWriter(Protocol):
    @property
    def repo(self) -> pygit2.Repository: ...

    @property
    def branch(self) -> str: ...

    @property
    def remote(self) -> bool: ...

    def refresh(self) -> str:
        """Bring the branch up to date (fetch for a remote); returns its tip."""
        ...

    def write(self, *, parent: str, edits: Mapping[str, bytes], message: str) -> str:
        """Commit `edits` on `parent` (the tip `refresh` returned) and publish it.

        Raises `BranchMoved` or `PushRejected` when the branch moved meanwhile."""
        ...


def _branch_name(revision: str, default: str | None) -> str:
    text = revision.strip()
    if text in ("", "HEAD"):
        if not default:
            raise UnknownRevision("", "HEAD", "the repository has no default branch")
        return default.removeprefix("refs/heads/")
    return text.removeprefix("refs/heads/").removeprefix("origin/")


RaceHook = Callable[[str], None]
"""Test seam: called with "built" (the commit exists, the ref is not locked yet) and
"locked" (the ref is locked and still the expected tip, not moved yet)."""


class LocalBranch:
    """A branch of a repository on this machine, committed to in place."""

    remote = False

    def __init__(
        self,
        path: Path,
        revision: str,
        identity: BotIdentity,
        *,
        race_hook: RaceHook | None = None,
    ) -> None:
        self._race_hook = race_hook or (lambda _point: None)
        try:
            self._repo = pygit2.Repository(str(path))
        except pygit2.GitError as err:
            raise UnknownRevision(str(path), revision, f"not a Git repository: {err}") from None
        default = (
            None if self._repo.head_is_unborn else self._repo.references["HEAD"].resolve().name
        )
        self._branch = _branch_name(revision, default)
        self._identity = identity
        if self._ref not in self._repo.references:
            raise UnknownRevision(str(path), revision, "targetRevision is not a branch")

    @property
    def repo(self) -> pygit2.Repository:
        return self._repo

    @property
    def branch(self) -> str:
        return self._branch

    @property
    def _ref(self) -> str:
        return f"refs/heads/{self._branch}"

    def refresh(self) -> str:
        return str(self._repo.references[self._ref].target)

    def write(self, *, parent: str, edits: Mapping[str, bytes | None], message: str) -> str:
        base = self._repo[parent].peel(pygit2.Commit)
        oid = build_edit_commit(
            self._repo, parent=base, edits=edits, message=message, identity=self._identity
        )
        if oid is None:
            return parent
        self._race_hook("built")
        self._move_branch(expected=parent, to=oid)
        return str(oid)

    def _move_branch(self, *, expected: str, to: pygit2.Oid) -> None:
        """Move the branch from `expected` to `to`, or raise `BranchMoved` and move nothing.

        The check and the move happen under the ref's lock, so nothing can land between
        them (a plain check-then-write lost a commit pushed in that gap)."""
        try:
            with self._repo.transaction() as txn:
                txn.lock_ref(self._ref)
                tip = self.refresh()
                if tip != expected:
                    raise BranchMoved(
                        f"{self._branch} moved to {tip[:12]} while a commit on "
                        f"{expected[:12]} was being built"
                    )
                self._race_hook("locked")
                self._follow_in_working_tree(to)
                txn.set_target(self._ref, to, message="headway: commit")
        except pygit2.GitError as err:  # another writer holds the lock (or left it behind)
            raise BranchMoved(f"{self._branch} could not be locked for the update: {err}") from None

    def _follow_in_working_tree(self, oid: pygit2.Oid) -> None:
        if self._repo.is_bare or self._repo.head_is_unborn:
            return
        if self._repo.references["HEAD"].resolve().name != self._ref:
            return
        try:
            target = self._repo[oid]
            self._repo.checkout_tree(target, strategy=CheckoutStrategy.SAFE)  # type: ignore[no-untyped-call]
        except pygit2.GitError as err:
            log.warning("working tree of %s left as it was: %s", self._repo.workdir, err)


class RemoteBranch:
    """A branch of a remote, through Headway's Git cache: fetch, commit, push."""

    remote = True

    def __init__(self, git: GitRepository, revision: str, identity: BotIdentity) -> None:
        self._git = git
        self._revision = revision
        self._identity = identity
        self._branch = ""

    @property
    def repo(self) -> pygit2.Repository:
        return self._git.repo

    @property
    def branch(self) -> str:
        return self._branch

    def refresh(self) -> str:
        self._git.fetch()
        snapshot = self._git.snapshot()
        self._branch = _branch_name(self._revision, snapshot.head_target)
        if f"refs/heads/{self._branch}" not in snapshot.refs:
            raise UnknownRevision(self._git.url, self._revision, "targetRevision is not a branch")
        return snapshot.refs[f"refs/heads/{self._branch}"]

    def write(self, *, parent: str, edits: Mapping[str, bytes | None], message: str) -> str:
        # Built on `parent` (the tip the caller read and judged), not on whatever the cache
        # fetched since: a newer tip makes the push refused, never an unexamined base.
        # Under the repository's lock throughout: another writer of the shared cache (a
        # thread, another process) cannot move the branch between the commit and the push.
        with self._git.writing():
            result = self._git.commit_edits(
                branch=self._branch,
                edits=edits,
                message=message,
                identity=self._identity,
                base=parent,
            )
            if not result.created:
                return parent
            self._git.push(self._branch)  # PushRejected when someone pushed meanwhile
        return result.sha


def open_branch(
    git: GitCache, url: str, revision: str, identity: BotIdentity
) -> LocalBranch | RemoteBranch:
    """The writer for an Application source's (repoURL, targetRevision)."""
    local = local_repo_path(url)
    if local is not None:
        return LocalBranch(local, revision, identity)
    return RemoteBranch(git.repository(url), revision, identity)
