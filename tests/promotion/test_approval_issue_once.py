"""An approval gate asks on the forge once per request: a controller killed after GitHub
opened the issue and before the number was recorded (or an answer lost on its way back)
resumes on that issue, found by the marker in its body, and never opens a second one. How the
gate ended is told on the issue exactly once, whatever point the kill lands on.

The kill lands at the exact point: the fake GitHub raises right after it created the issue
(`after_create`), or the controller's hook raises at its named points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from github_issues_fake import FakeGitHubIssues
from promotion_harness import Harness

from headway.promotion.forge_approvals import ForgeApprovals


class Killed(BaseException):
    """The controller process dying: nothing after this point runs, nothing catches it."""


def _harness(tmp_path: Path) -> tuple[Harness, FakeGitHubIssues]:
    h = Harness(tmp_path)
    github = FakeGitHubIssues(now=h.clock.now)
    for n in range(3):  # the list GitHub answers holds pull requests too, over pages
        github.add_pull_request(f"some change {n}")
    h.approvals = ForgeApprovals(github.forge())
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    return h, github


def _kill_once(error: BaseException) -> Any:
    fired: list[bool] = []

    def after_create(_issue: dict[str, Any]) -> None:
        if not fired:
            fired.append(True)
            raise error

    return after_create


def _approve_and_commit(h: Harness, github: FakeGitHubIssues, number: int) -> None:
    github.comment(number, "lead@x.io", "approved")
    h.advance(10)
    h.step("web-prod-1", h.new_controller())
    assert h.phase("web-prod-1") == "Committed" and h.repo.pins["prod"] == "v2"


def test_killed_after_github_opened_the_issue_resumes_on_that_issue(tmp_path: Path) -> None:
    h, github = _harness(tmp_path)
    github.after_create = _kill_once(Killed())
    with pytest.raises(Killed):
        h.step("web-prod-1")
    [issue] = github.opened  # GitHub has it; the controller never heard its number
    h.advance(5)  # the restart comes later
    h.step("web-prod-1", h.new_controller())
    assert h.phase("web-prod-1") == "AwaitingApproval"
    assert [i["number"] for i in github.opened] == [issue["number"]]
    approval = h.status("web-prod-1")["approval"]
    assert (approval["issue"], approval["issueUrl"]) == (issue["number"], issue["html_url"])
    _approve_and_commit(h, github, issue["number"])
    assert [i["number"] for i in github.opened] == [issue["number"]]


def test_an_answer_lost_on_its_way_back_is_not_asked_again(tmp_path: Path) -> None:
    h, github = _harness(tmp_path)
    github.after_create = _kill_once(httpx2.ReadTimeout("the answer never came"))
    assert h.step("web-prod-1") == 30.0  # a forge error: shown, tried again later
    assert "cannot go on" in h.status("web-prod-1")["message"]
    h.advance(30)
    h.step("web-prod-1")
    [issue] = github.opened
    assert h.status("web-prod-1")["approval"]["issue"] == issue["number"]


@pytest.mark.parametrize("point", ["request-recorded", "issue-opened", "after-status"])
def test_killed_at_each_point_of_the_request_opens_one_issue(tmp_path: Path, point: str) -> None:
    h, github = _harness(tmp_path)

    def kill(at: str) -> None:
        if at == point:
            raise Killed()

    with pytest.raises(Killed):
        h.step("web-prod-1", h.new_controller(hook=kill))
    h.advance(5)
    h.step("web-prod-1", h.new_controller())
    h.step("web-prod-1", h.new_controller())
    [issue] = github.opened
    assert h.status("web-prod-1")["approval"]["issue"] == issue["number"]
    _approve_and_commit(h, github, issue["number"])


def test_each_request_has_its_own_issue(tmp_path: Path) -> None:
    """The marker names the request: another promotion's issue is never taken for this one."""
    h, github = _harness(tmp_path)
    h.step("web-prod-1")
    h.promote("web-prod-2", "prod", "v3", origin="rollback")
    h.advance(5)
    h.step("web-prod-2")
    first, second = github.opened
    assert h.status("web-prod-1")["approval"]["issue"] == first["number"]
    assert h.status("web-prod-2")["approval"]["issue"] == second["number"]
    assert "web-prod-1" in first["body"] and "web-prod-2" in second["body"]


@pytest.mark.parametrize("point", ["after-action", "outcome-told", "after-status"])
def test_the_outcome_is_told_once_whatever_point_the_kill_lands_on(
    tmp_path: Path, point: str
) -> None:
    h, github = _harness(tmp_path)
    h.step("web-prod-1")
    [issue] = github.opened
    github.comment(issue["number"], "lead@x.io", "approved")
    h.advance(10)

    def kill(at: str) -> None:
        if at == point:
            raise Killed()

    with pytest.raises(Killed):
        h.step("web-prod-1", h.new_controller(hook=kill))
    h.advance(5)
    h.step("web-prod-1", h.new_controller())
    h.step("web-prod-1", h.new_controller())
    assert h.phase("web-prod-1") == "Committed" and len(h.repo.commits) == 1
    told = [c["body"] for c in github.comments[issue["number"]] if c["user"]["type"] == "Bot"]
    assert [body.split(":")[0] for body in told] == ["Committed"]


def test_a_forge_down_at_the_request_still_notifies_and_opens_the_issue_later(
    tmp_path: Path,
) -> None:
    h, github = _harness(tmp_path)
    github.down = True
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "AwaitingApproval"  # the request is recorded meanwhile
    assert "HTTP 502" in h.status("web-prod-1")["message"]
    reasons = [e.get("reason") for e in h.store.list("v1", "Event")]
    assert reasons.count("ApprovalRequested") >= 1  # the approvers hear of it all the same
    github.down = False
    h.advance(30)
    h.step("web-prod-1")
    [issue] = github.opened
    assert h.status("web-prod-1")["approval"]["issue"] == issue["number"]
