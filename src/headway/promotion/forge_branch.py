"""Promotion commits through a forge: a branch per promotion, a pull request, a merge.

`PullRequestBranch` is a `BranchWriter` (the interface direct commits use), so the promotion's
repository edge (`environment_repo.GitEnvironment`) writes through it unchanged. Each write:

1. builds the commit on the base branch's tip in Headway's Git cache, on the branch
   `headway/<promotion>` (`headway/<promotion>-revert` for the re-commit of the previous
   image), and pushes it there (forced: the branch is Headway's own, rebuilt when the base
   moved);
2. opens a pull request for it, or reuses the one already open for that branch;
3. squash-merges it only if its head is still that commit, so the base branch gets exactly one
   commit carrying the promotion's message and trailers.

A promotion resumed after a crash finds its pull request already merged and returns that
merge commit: never a second pull request or commit. The base is fetched again just before the
merge; moved, or a merge the forge refuses after it moved, is `BranchMoved`, and the edge
rebuilds the commit on the new tip (a forge's merge API takes no expected base, so only a
repository that requires branches to be up to date closes the last round trip). Refused with
the base where it was (a required status check, branch protection), it is the forge's
`ForgeConflict`, shown on the promotion, and the next step tries the same pull request again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

import pygit2

from headway.controllers.convergence.git import BranchMoved, RemoteBranch
from headway.promotion import trailers
from headway.promotion.forge import Forge, ForgeConflict
from headway.source.git import GitRepository
from headway.source.git_commits import BotIdentity

__all__ = ["PullRequestBranch", "head_branch"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def head_branch(message: str) -> str:
    """The pull-request branch of a commit message: named after its promotion, so a resumed
    promotion finds its own; a message without the trailer gets a name from its hash."""
    name = trailers.promotion_of(message)
    if name:
        return f"headway/{_UNSAFE.sub('-', name)}"
    name = trailers.promotion_of(message, reverts=True)
    if name:
        return f"headway/{_UNSAFE.sub('-', name)}-revert"
    return f"headway/change-{hashlib.sha256(message.encode()).hexdigest()[:12]}"


def _title_and_body(message: str) -> tuple[str, str]:
    title, _, body = message.strip().partition("\n")
    return title.strip(), body.strip() + "\n"


class PullRequestBranch:
    """The base branch of a repository on a forge, written to through pull requests."""

    remote = True

    def __init__(
        self, git: GitRepository, revision: str, identity: BotIdentity, forge: Forge
    ) -> None:
        self._git = git
        self._base = RemoteBranch(git, revision, identity)
        self._identity = identity
        self._forge = forge

    @property
    def repo(self) -> pygit2.Repository:
        return self._git.repo

    @property
    def branch(self) -> str:
        return self._base.branch

    @property
    def forge(self) -> Forge:
        """The forge, for approval comments on the same repository."""
        return self._forge

    def refresh(self) -> str:
        return self._base.refresh()

    def write(self, *, parent: str, edits: Mapping[str, bytes], message: str) -> str:
        head = head_branch(message)
        existing = self._forge.find_pull_request(head=head)
        if existing is not None and existing.merged and existing.merge_commit:
            self._git.fetch()
            return existing.merge_commit  # merged before a restart: nothing to do again
        with self._git.writing():  # the branch is not moved by another writer before the push
            result = self._git.commit_edits(
                branch=head, edits=edits, message=message, identity=self._identity, base=parent
            )
            if not result.created:
                return parent
            self._git.push(head, force=True)
        title, body = _title_and_body(message)
        pull = existing
        if pull is None or not pull.open:
            pull = self._forge.open_pull_request(
                head=head, base=self.branch, title=title, body=body
            )
        if self.refresh() != parent:
            # A forge merges onto its base as it is then: a commit built on an older tip would
            # carry whatever landed since unexamined. Build it again on the new tip (the edge
            # first checks that the file there is still the one the gate judged).
            raise BranchMoved(f"{self.branch} moved after the commit for {head} was built")
        try:
            merged = self._forge.merge_pull_request(
                pull.number, head_sha=result.sha, title=title, message=body
            )
        except ForgeConflict as err:
            if self.refresh() != parent:  # the base moved: rebuild the commit on its new tip
                raise BranchMoved(str(err)) from None
            raise  # refused for another reason (a required check): shown, tried again later
        self._git.fetch()
        return merged
