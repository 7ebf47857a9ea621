"""The forge a repository lives on: pull requests, and approvals given as issue comments.

A plain Git remote needs no forge: promotions are direct commits (`convergence_git`). A
repository on a forge can instead have each promotion go through a branch and a pull request
that Headway merges (`forge_branch.PullRequestBranch`), and take approvals from comments.

`Forge` is the small protocol; `github.GitHubForge` implements it over GitHub's REST API.
Reading decisions from comments is pure and lives here: a comment is a decision only when its
whole body (surrounding whitespace aside) is exactly `approved` or `denied`, and only if it was
never edited — a maintainer may edit someone else's comment on GitHub, so an edited comment
no longer proves what its author said. Who may decide is the approval gate's business
(`approval.judge_gate`); this module only says who said what, when.

Opening an issue is the one forge write that leaves nothing to find by name (a pull request is
found by its branch), so an issue Headway opens carries a marker — an HTML comment, invisible
on the page — naming the request it was opened for; `Forge.find_issue` finds it again, so a
controller killed after the forge created the issue and before it recorded the number asks on
that issue instead of opening a second one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from headway.promotion import approval
from headway.source.errors import SourceError

__all__ = [
    "CLOCK_SKEW",
    "Comment",
    "CommentDecision",
    "Forge",
    "ForgeConflict",
    "ForgeError",
    "ForgeNotFound",
    "Issue",
    "PullRequest",
    "Verdict",
    "approval_decisions",
    "carries_marker",
    "decisions",
    "marker_line",
    "parse_decision",
]

CLOCK_SKEW = timedelta(hours=1)
"""How far the forge's clock may be behind Headway's when issues are looked up by time."""


class ForgeError(SourceError):
    """A forge request that failed; the message names the request and the forge's reason.

    A `SourceError`, like any other failure to write to the repository: the promotion shows
    it and tries again on its next step."""


class ForgeNotFound(ForgeError):
    """The repository, pull request or issue does not exist (or the token may not see it)."""


class ForgeConflict(ForgeError):
    """The pull request cannot be merged as asked: its head moved, or it conflicts."""


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str  # the page a person opens
    head: str  # the branch proposed
    head_sha: str
    base: str
    open: bool
    merged: bool
    merge_commit: str  # the commit on `base` once merged ("" before)


@dataclass(frozen=True)
class Issue:
    number: int
    url: str


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    author_is_bot: bool
    body: str
    created_at: datetime
    updated_at: datetime
    url: str


def marker_line(marker: str) -> str:
    """How `marker` is carried in an issue's body: an HTML comment, which the page hides."""
    if "-->" in marker or "--!>" in marker or "\n" in marker:
        raise ValueError(f"an issue marker cannot end its comment or the line: {marker!r}")
    return f"<!-- headway: {marker} -->"


def carries_marker(body: str, marker: str) -> bool:
    """Whether an issue's body was written for `marker` (a line of its own, exactly)."""
    return marker_line(marker) in (line.strip() for line in body.splitlines())


class Verdict(StrEnum):
    APPROVED = "approved"
    DENIED = "denied"


@dataclass(frozen=True)
class CommentDecision:
    verdict: Verdict
    author: str
    at: datetime
    comment_id: int
    url: str


def parse_decision(comment: Comment) -> CommentDecision | None:
    """The decision a comment states, or None: anything but an exact, unedited `approved` or
    `denied` from a person is conversation (`Approved!`, `lgtm`, `approved, but...`)."""
    if comment.author_is_bot or comment.updated_at != comment.created_at:
        return None
    body = comment.body.strip()
    if body not in (Verdict.APPROVED.value, Verdict.DENIED.value):
        return None
    return CommentDecision(
        Verdict(body), comment.author, comment.created_at, comment.id, comment.url
    )


def decisions(comments: Iterable[Comment]) -> list[CommentDecision]:
    """Every decision among `comments`, oldest first."""
    found = [d for d in (parse_decision(c) for c in comments) if d is not None]
    return sorted(found, key=lambda d: (d.at, d.comment_id))


def approval_decisions(comments: Iterable[Comment]) -> list[approval.Decision]:
    """The comments' decisions as the approval gate records them (`via: forge`, with the
    comment's link), oldest first; the gate then applies its allow-list, author and time rules."""
    verdicts = {Verdict.APPROVED: "approve", Verdict.DENIED: "deny"}
    return [
        approval.Decision(verdicts[d.verdict], d.author, d.at, via="forge", comment=d.url)
        for d in decisions(comments)
    ]


class Forge(Protocol):
    """What promotion needs from a forge. Every method raises `ForgeError` on failure."""

    def find_pull_request(self, *, head: str) -> PullRequest | None:
        """The most recent pull request proposing branch `head` (open or not), or None."""
        ...

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        """Propose branch `head` (already pushed) for `base`."""
        ...

    def merge_pull_request(self, number: int, *, head_sha: str, title: str, message: str) -> str:
        """Merge as one commit whose message is `title` + `message`, only if the head is still
        `head_sha`; returns the commit on the base branch. `ForgeConflict` otherwise."""
        ...

    def open_issue(self, *, title: str, body: str) -> Issue:
        """An issue to collect approval comments on."""
        ...

    def find_issue(self, *, marker: str, opened_after: datetime) -> Issue | None:
        """The first issue opened after `opened_after` (Headway's clock, less `CLOCK_SKEW`)
        whose body `carries_marker(marker)`, or None."""
        ...

    def comments(self, number: int) -> list[Comment]:
        """Every comment of issue (or pull request) `number`, oldest first."""
        ...

    def post_comment(self, number: int, body: str) -> Comment: ...
