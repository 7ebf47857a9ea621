"""The GitHub forge against replayed API answers (tests/promotion/github/: each file says where
its answers came from), and the reading of approval comments."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from github_replay import Replay

from headway.promotion.approval import GateVerdict, judge_gate
from headway.promotion.forge import (
    Comment,
    ForgeConflict,
    ForgeError,
    ForgeNotFound,
    Verdict,
    approval_decisions,
    decisions,
    parse_decision,
)
from headway.promotion.github import GitHubForge, github_repository

TOKEN = "ghs_secretsecretsecret"


def forge(replay: Replay) -> GitHubForge:
    return GitHubForge(owner="example-org", repository="infra", client=replay.client(), token=TOKEN)


def test_a_promotion_opens_and_squash_merges_a_pull_request() -> None:
    replay = Replay("promote_through_a_pull_request.json")
    github = forge(replay)
    assert github.find_pull_request(head="headway/web-prod-1") is None
    pull = github.open_pull_request(
        head="headway/web-prod-1",
        base="main",
        title="promote web prod: registry.local/web:v2",
        body="Headway promotion web-prod-1",
    )
    assert (pull.number, pull.open, pull.merged, pull.base) == (42, True, False, "main")
    merged = github.merge_pull_request(
        42,
        head_sha=pull.head_sha,
        title="promote web prod: registry.local/web:v2",
        message="Headway-Promotion: web-prod-1\n",
    )
    assert merged == "e5bd3914e2e596debea16f433f57875b5b90bcd6"
    assert replay.done
    for request in replay.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["x-github-api-version"] == "2022-11-28"


def test_a_resumed_promotion_finds_its_merged_pull_request() -> None:
    replay = Replay("resume_finds_the_merged_pull_request.json")
    pull = forge(replay).find_pull_request(head="headway/web-prod-1")
    assert pull is not None and pull.merged and not pull.open
    assert pull.merge_commit == "e5bd3914e2e596debea16f433f57875b5b90bcd6"


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("merge_refused_head_moved.json", "HTTP 409: Head branch was modified"),
        ("merge_refused_not_mergeable.json", "HTTP 405: Pull Request is not mergeable"),
    ],
)
def test_a_refused_merge_is_a_conflict(scenario: str, reason: str) -> None:
    with pytest.raises(ForgeConflict, match=reason):
        forge(Replay(scenario)).merge_pull_request(42, head_sha="x", title="t", message="m")


def test_errors_are_translated_and_never_show_the_token() -> None:
    github = forge(Replay("errors.json"))
    raised: list[ForgeError] = []
    for call in (
        lambda: github.open_issue(title="t", body="b"),
        lambda: github.open_issue(title="t", body="b"),
        lambda: github.open_issue(title="t", body="b"),
        lambda: github.open_pull_request(head="h", base="main", title="t", body="b"),
        lambda: github.open_issue(title="t", body="b"),
    ):
        with pytest.raises(ForgeError) as caught:
            call()
        raised.append(caught.value)
    assert isinstance(raised[0], ForgeNotFound)
    assert [str(err) for err in raised] == [
        "GitHub POST /issues: HTTP 404: Not Found",
        "GitHub POST /issues: HTTP 401: Bad credentials",
        "GitHub POST /issues: HTTP 403: API rate limit exceeded for installation ID 1. "
        "(rate limited until epoch second 1796179200)",
        "GitHub POST /pulls: HTTP 422: Validation Failed: "
        "A pull request already exists for example-org:headway/web-prod-1.",
        "GitHub POST /issues: HTTP 502: Bad Gateway",
    ]
    assert not any(TOKEN in str(err) for err in raised)


def test_approval_comments_across_pages_become_decisions() -> None:
    replay = Replay("approval_issue_and_comments.json")
    github = forge(replay)
    issue = github.open_issue(
        title="Approve web-prod-1: registry.local/web:v2 to prod",
        body="Comment exactly `approved` or `denied`.",
    )
    assert issue.number == 7
    comments = github.comments(issue.number)
    assert [c.id for c in comments] == [11, 12, 13, 14, 15]  # both pages, oldest first
    found = decisions(comments)
    # The bot's "approved", "Approved!", an edited "denied" and "approved, after lunch" are
    # not decisions; "  approved\n" from lead is.
    assert [(d.verdict, d.author, d.comment_id) for d in found] == [(Verdict.APPROVED, "lead", 15)]
    assert found[0].at == datetime(2026, 12, 2, 2, 35, tzinfo=UTC)
    [recorded] = approval_decisions(comments)
    assert (recorded.verdict, recorded.by, recorded.via) == ("approve", "lead", "forge")
    assert recorded.comment.endswith("#issuecomment-15")
    posted = github.post_comment(7, "Promoted: registry.local/web:v2 is live and Healthy in prod.")
    assert posted.author_is_bot and parse_decision(posted) is None
    assert replay.done


def _comment(body: str, *, edited: bool = False, bot: bool = False) -> Comment:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    later = datetime(2026, 1, 2, tzinfo=UTC) if edited else at
    return Comment(1, "lead", bot, body, at, later, "")


@pytest.mark.parametrize(
    ("body", "verdict"),
    [
        ("approved", Verdict.APPROVED),
        ("denied", Verdict.DENIED),
        ("\n denied \n", Verdict.DENIED),
        ("Approved", None),
        ("approved.", None),
        ("approve", None),
        ("not approved", None),
        ("approved\nbut check the dashboard", None),
        ("", None),
    ],
)
def test_only_an_exact_word_is_a_decision(body: str, verdict: Verdict | None) -> None:
    decision = parse_decision(_comment(body))
    assert (decision.verdict if decision else None) == verdict


def test_edited_and_bot_comments_are_never_decisions() -> None:
    assert parse_decision(_comment("approved", edited=True)) is None
    assert parse_decision(_comment("approved", bot=True)) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/example-org/infra.git", ("example-org", "infra")),
        ("https://github.com/example-org/infra", ("example-org", "infra")),
        ("https://x-access-token:t@github.com/example-org/infra.git", ("example-org", "infra")),
        ("git@github.com:example-org/infra.git", ("example-org", "infra")),
        ("https://gitlab.com/example-org/infra.git", None),
        ("/srv/git/infra", None),
    ],
)
def test_github_clone_urls_are_recognized(url: str, expected: tuple[str, str] | None) -> None:
    assert github_repository(url) == expected


def test_comment_decisions_go_through_the_approval_gate() -> None:
    github = forge(Replay("approval_issue_and_comments.json"))
    github.open_issue(
        title="Approve web-prod-1: registry.local/web:v2 to prod",
        body="Comment exactly `approved` or `denied`.",
    )
    recorded = tuple(approval_decisions(github.comments(7)))
    asked = datetime(2026, 12, 2, 2, 30, tzinfo=UTC)

    def outcome(approvers: tuple[str, ...], author: str) -> GateVerdict:
        return judge_gate(
            recorded,
            approvers=approvers,
            author=author,
            requested_at=asked,
            deadline=datetime(2026, 12, 2, 3, 30, tzinfo=UTC),
            now=datetime(2026, 12, 2, 2, 50, tzinfo=UTC),
        ).verdict

    assert outcome(("lead",), "dev") is GateVerdict.APPROVED
    assert outcome(("ops",), "dev") is not GateVerdict.APPROVED  # "approved, after lunch"
    assert outcome(("lead",), "lead") is not GateVerdict.APPROVED  # the author cannot approve
