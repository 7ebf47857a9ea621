"""Approval through a forge's issue comments: the gate opens one issue, reads exact, unedited
`approved` / `denied` comments by people, holds them to the same rules as the CLI (the author
cannot approve), and says on the issue how it ended."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from promotion_harness import Harness

from headway.promotion.forge import Comment, Issue, PullRequest, carries_marker
from headway.promotion.forge_approvals import ForgeApprovals


class IssueForge:
    """Issues and comments in memory (no pull requests: direct commits here)."""

    def __init__(self) -> None:
        self.issues: dict[int, tuple[str, str]] = {}
        self.said: dict[int, list[Comment]] = {}

    def open_issue(self, *, title: str, body: str) -> Issue:
        number = len(self.issues) + 1
        self.issues[number] = (title, body)
        self.said[number] = []
        return Issue(number, f"https://forge/issues/{number}")

    def find_issue(self, *, marker: str, opened_after: datetime) -> Issue | None:
        for number, (_title, body) in self.issues.items():
            if carries_marker(body, marker):
                return Issue(number, f"https://forge/issues/{number}")
        return None

    def comment(
        self,
        number: int,
        author: str,
        body: str,
        at: datetime,
        *,
        bot: bool = False,
        edited: bool = False,
    ) -> None:
        cid = sum(len(c) for c in self.said.values()) + 1
        updated = at + timedelta(seconds=30) if edited else at
        self.said[number].append(
            Comment(cid, author, bot, body, at, updated, f"https://forge/c/{cid}")
        )

    def comments(self, number: int) -> list[Comment]:
        return list(self.said[number])

    def post_comment(self, number: int, body: str) -> Comment:
        now = datetime(2026, 1, 1)
        self.comment(number, "headway[bot]", body, now, bot=True)
        return self.said[number][-1]

    def find_pull_request(self, *, head: str) -> PullRequest | None:
        raise NotImplementedError

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        raise NotImplementedError

    def merge_pull_request(self, number: int, *, head_sha: str, title: str, message: str) -> str:
        raise NotImplementedError


def test_issue_comments_decide_by_the_gates_rules_and_hear_the_outcome(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    forge = IssueForge()
    h.approvals = ForgeApprovals(forge)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "AwaitingApproval"
    [(title, body)] = forge.issues.values()
    assert "web-prod-1" in title and "`lead@x.io`" in body
    assert h.status("web-prod-1")["approval"]["issueUrl"] == "https://forge/issues/1"

    now = h.clock.now()
    forge.comment(1, "dev@x.io", "approved", now)  # the author
    forge.comment(1, "lead@x.io", "Approved!", now)  # conversation, not a decision
    forge.comment(1, "lead@x.io", "approved", now, edited=True)  # edited: proves nothing
    forge.comment(1, "ci[bot]", "approved", now, bot=True)
    h.advance(10)
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "AwaitingApproval" and h.repo.commits == []
    ignored = h.status("web-prod-1")["approval"]["ignored"]
    assert len(ignored) == 1 and "dev@x.io" in ignored[0]

    forge.comment(1, "lead@x.io", "approved", h.clock.now())
    h.advance(10)
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "Committed" and h.repo.pins["prod"] == "v2"
    approval = h.status("web-prod-1")["approval"]
    assert (approval["decidedBy"], approval["via"]) == ("lead@x.io", "forge")
    told = forge.said[1][-1]
    assert told.author_is_bot and told.body.startswith("Committed:")


def test_a_timed_out_issue_is_told_and_nothing_is_committed(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    forge = IssueForge()
    h.approvals = ForgeApprovals(forge)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    h.step("web-prod-1")
    h.advance(3600)
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "TimedOut" and h.repo.commits == []
    assert forge.said[1][-1].body.startswith("TimedOut:")
