"""Write a rollback to Git: the Application's source back at an earlier revision, committed on
the tracked branch, so automated sync syncs the rollback instead of undoing it.

For each Git repository the Application reads, the files it reads (`application_scopes`, at
the tip and at the target revision) that differ between the target revision and the tip get
the target's bytes back (`restore_edit`) in one commit with a structured message. A Helm
chart from a chart repository cannot be rolled back by a Git edit (its version is the
Application's `targetRevision`), so a rollback across chart versions is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import pygit2

from headway.controllers.convergence.git import BranchMoved
from headway.source.errors import PushRejected
from headway.source.image_history import PathScope
from headway.source.image_scope import application_scopes
from headway.source.rollback_edits import restore_edit
from headway.source.spec import ApplicationSource

__all__ = [
    "ROLLBACK_TRAILER",
    "OpenBranch",
    "RollbackCommits",
    "RollbackPlan",
    "RollbackRefused",
    "rollback_message",
    "write_rollback",
]

ROLLBACK_TRAILER = "Headway-Rollback-To"


class RollbackBranch(Protocol):
    """A branch as `BranchWriter` has it, whose commits may also delete files (None)."""

    @property
    def repo(self) -> pygit2.Repository: ...

    @property
    def branch(self) -> str: ...

    def refresh(self) -> str: ...

    def write(self, *, parent: str, edits: Mapping[str, bytes | None], message: str) -> str: ...


OpenBranch = Callable[[str, str], RollbackBranch]
"""(repoURL, targetRevision) -> the branch to write to (`git.open_branch`)."""


class RollbackRefused(Exception):
    """The rollback cannot be written to Git as an edit; the message says what and why."""


@dataclass(frozen=True)
class RollbackPlan:
    """Who rolls `app` (namespace/name) back to history entry `history_id`, and why."""

    app: str
    who: str
    reason: str
    history_id: str
    sources: tuple[ApplicationSource, ...]
    from_revisions: tuple[str, ...]  # per source: what is synced now
    to_revisions: tuple[str, ...]  # per source: what the history entry synced


@dataclass(frozen=True)
class RollbackCommits:
    revisions: tuple[str, ...]  # per source: what to sync now (a new commit, or as it was)
    commits: tuple[str, ...]  # the commits written
    summary: str


def rollback_message(
    plan: RollbackPlan, *, url: str, branch: str, from_rev: str, to_rev: str, files: Sequence[str]
) -> str:
    """Subject, who and why, what it restores, and trailers a reader (or Headway) can parse."""
    why = plan.reason or "no reason given"
    lines = [
        f"Roll back {plan.app} to {to_rev[:12]} (history {plan.history_id})",
        "",
        f"Requested by {plan.who}: {why}.",
        f"Restores in {url} {branch}, as they were at {to_rev[:12]}"
        f" (synced before: {from_rev[:12] or 'nothing'}):",
        *(f"  {f}" for f in files),
        "",
        f"Headway-Rollback-Of: {plan.app}",
        f"Headway-Rollback-From: {from_rev}",
        f"{ROLLBACK_TRAILER}: {to_rev}",
        f"Headway-Requested-By: {plan.who}",
    ]
    return "\n".join(lines) + "\n"


def _check_charts(plan: RollbackPlan) -> None:
    for source, now, then in zip(plan.sources, plan.from_revisions, plan.to_revisions, strict=True):
        if source.get("chart") and now and then and now != then:
            raise RollbackRefused(
                f"chart {source.get('chart')} from {source.get('repoURL')}: from {now} back to"
                f" {then}, but a chart repository's version is the Application's"
                " targetRevision, not a file in Git, so it cannot be rolled back by a Git edit"
            )


def _groups(plan: RollbackPlan) -> dict[tuple[str, str], str]:
    """(repoURL, targetRevision) -> the revision the history entry synced from it."""
    groups: dict[tuple[str, str], str] = {}
    for source, then in zip(plan.sources, plan.to_revisions, strict=True):
        if source.get("chart") or not source.get("repoURL"):
            continue
        key = (str(source["repoURL"]), str(source.get("targetRevision") or "HEAD"))
        groups.setdefault(key, then)
    return groups


def _scopes_at(
    plan: RollbackPlan, commits: dict[tuple[str, str], tuple[pygit2.Repository, str]]
) -> dict[tuple[str, str], PathScope]:
    """The files each repository's content is read from, at the revision `commits` names."""

    def read(url: str, revision: str, path: str) -> str | None:
        found = commits.get((url, revision or "HEAD"))
        if found is None:
            return None
        repo, sha = found
        try:
            obj = repo[repo[sha].peel(pygit2.Commit).tree[path].id]
        except KeyError:
            return None
        return bytes(obj.data).decode("utf-8", "replace") if isinstance(obj, pygit2.Blob) else None

    scopes = application_scopes(plan.sources, read)
    return {(s.repo_url, s.target_revision or "HEAD"): s.scope for s in scopes}


def _write_one(
    plan: RollbackPlan, writer: RollbackBranch, *, key: tuple[str, str], attempts: int
) -> tuple[str, bool]:
    """Commit the restore on one branch; (the revision to sync, whether a commit was written)."""
    target = _groups(plan)[key]
    for _ in range(attempts):
        tip = writer.refresh()
        if target not in writer.repo:
            raise RollbackRefused(f"{key[0]} has no commit {target[:12]} (history rewritten?)")
        at_tip = _scopes_at(plan, {key: (writer.repo, tip)})
        at_target = _scopes_at(plan, {key: (writer.repo, target)})
        scopes = tuple(s for s in (at_tip.get(key), at_target.get(key)) if s is not None)
        edit = restore_edit(writer.repo, tip=tip, target=target, scopes=scopes)
        if not edit.edits:
            return tip, False
        from_rev = plan.from_revisions[_index_of(plan, key)]
        message = rollback_message(
            plan,
            url=key[0],
            branch=writer.branch,
            from_rev=from_rev,
            to_rev=target,
            files=edit.files,
        )
        try:
            return writer.write(parent=tip, edits=edit.edits, message=message), True
        except (BranchMoved, PushRejected):
            continue  # someone pushed meanwhile: build it again on the new tip
    raise RollbackRefused(f"{key[0]} {writer.branch} kept moving: {attempts} attempts failed")


def _index_of(plan: RollbackPlan, key: tuple[str, str]) -> int:
    for i, source in enumerate(plan.sources):
        if (str(source.get("repoURL")), str(source.get("targetRevision") or "HEAD")) == key:
            return i
    raise KeyError(key)


def write_rollback(
    plan: RollbackPlan, *, open_branch: OpenBranch, attempts: int = 3
) -> RollbackCommits:
    """Write the rollback to every Git repository the Application reads.

    Raises `RollbackRefused` when it cannot be expressed as an edit, and `SourceError` when a
    repository cannot be reached (nothing is synced then)."""
    _check_charts(plan)
    synced: dict[tuple[str, str], str] = {}
    commits: list[str] = []
    for key in _groups(plan):
        sha, written = _write_one(plan, open_branch(*key), key=key, attempts=attempts)
        synced[key] = sha
        commits += [sha] if written else []
    revisions = tuple(
        then
        if source.get("chart") or not source.get("repoURL")
        else synced[(str(source["repoURL"]), str(source.get("targetRevision") or "HEAD"))]
        for source, then in zip(plan.sources, plan.to_revisions, strict=True)
    )
    summary = (
        f"committed {', '.join(c[:12] for c in commits)}"
        if commits
        else "Git already holds that state; nothing committed"
    )
    return RollbackCommits(revisions, tuple(commits), summary)
