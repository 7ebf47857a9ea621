"""Commits built in memory: file edits and reverts, never touching a working tree.

Both functions only write objects and return the new commit; moving a branch ref and pushing
is the caller's decision (`GitRepository` in `headway.source.git`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pygit2

from headway.source.errors import PathNotFound, RevertConflict, SourceError
from headway.source.tree import normalize_path

__all__ = ["BotIdentity", "build_edit_commit", "build_revert_commit", "revert_message"]


@dataclass(frozen=True)
class BotIdentity:
    """The author and committer of commits Headway writes (promotions, reverts)."""

    name: str = "Headway"
    email: str = "headway@localhost"

    def signature(self) -> pygit2.Signature:
        return pygit2.Signature(self.name, self.email)


def _edited_tree(
    repo: pygit2.Repository, base: pygit2.Tree, edits: Mapping[str, bytes | None]
) -> pygit2.Oid:
    index = pygit2.Index()
    index.read_tree(base)
    for raw_path, content in edits.items():
        path = normalize_path(raw_path)
        if not path:
            raise SourceError(f"cannot edit {raw_path!r}: not a file path")
        try:
            existing: pygit2.IndexEntry | None = index[path]
        except KeyError:
            existing = None
        if content is None:
            if existing is None:
                raise PathNotFound(path, f"tree {str(base.id)[:12]} (cannot delete it)")
            index.remove(path)
            continue
        mode = existing.mode if existing is not None else pygit2.enums.FileMode.BLOB
        index.add(pygit2.IndexEntry(path, repo.create_blob(content), mode))
    return index.write_tree(repo)


def build_edit_commit(
    repo: pygit2.Repository,
    *,
    parent: pygit2.Commit,
    edits: Mapping[str, bytes | None],
    message: str,
    identity: BotIdentity,
) -> pygit2.Oid | None:
    """A commit on top of `parent` applying `edits` (path -> bytes, or None to delete).

    Returns None when the edits change nothing (the files already hold those bytes).
    """
    tree = _edited_tree(repo, parent.tree, edits)
    if tree == parent.tree.id:
        return None
    sig = identity.signature()
    return repo.create_commit(None, sig, sig, message, tree, [parent.id])


def revert_message(commit: pygit2.Commit) -> str:
    subject = commit.message.splitlines()[0] if commit.message else ""
    return f'Revert "{subject}"\n\nThis reverts commit {commit.id}.\n'


def build_revert_commit(
    repo: pygit2.Repository,
    *,
    commit: pygit2.Commit,
    onto: pygit2.Commit,
    branch: str,
    identity: BotIdentity,
    message: str | None = None,
) -> pygit2.Oid | None:
    """A commit on top of `onto` undoing `commit`; None when it is already undone.

    A merge commit is reverted against its first parent (`git revert -m 1`).
    Raises `RevertConflict` naming the conflicting paths; nothing is written then.
    """
    mainline = 1 if len(commit.parents) > 1 else 0
    index = repo.revert_commit(commit, onto, mainline)
    if index.conflicts is not None:
        paths = sorted(
            {entry.path for trio in index.conflicts for entry in trio if entry is not None}
        )
        raise RevertConflict(str(commit.id), branch, paths)
    tree = index.write_tree(repo)
    if tree == onto.tree.id:
        return None
    sig = identity.signature()
    text = message if message is not None else revert_message(commit)
    return repo.create_commit(None, sig, sig, text, tree, [onto.id])
