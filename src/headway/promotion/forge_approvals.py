"""Approvals through a forge's issue comments: the gate opens an issue, reads `approved` /
`denied` comments back as decisions, and says how it ended.

A comment counts as a decision only as `forge.parse_decision` reads it (exact body, a person,
never edited); whether its author may decide is still the gate's call
(`approval.judge_gate`: the allow-list, not the change's author, before the deadline). The
forge authenticates the comment's author, which the CLI's `--as` cannot do.

Opening the issue is idempotent per request: the issue's body carries a marker naming the
promotion and the time its approval was requested (`request_marker`), which the controller has
recorded before it asks; a controller killed after the forge opened the issue and before the
number was recorded finds that issue again instead of opening a second one. How the gate
ended is told once the same way: the comment carries the request's outcome marker, and one
already on the issue is not posted again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from headway.kubetime import format_precise_time, format_time
from headway.promotion import forge as forges
from headway.promotion.approval import Decision
from headway.promotion.record import PromotionSpec

__all__ = ["ApprovalChannel", "ForgeApprovals", "request_marker"]


def request_marker(spec: PromotionSpec, requested_at: datetime) -> str:
    """What names one approval request on the forge: the promotion and when it was asked (a
    promotion asked again, about a changed file, is a new request with a new issue)."""
    return f"approval-request {spec.namespace}/{spec.name} {format_precise_time(requested_at)}"


class ApprovalChannel(Protocol):
    def open(
        self,
        spec: PromotionSpec,
        *,
        approvers: tuple[str, ...],
        requested_at: datetime,
        deadline: datetime,
    ) -> tuple[int, str]:
        """Ask for a decision on the request made at `requested_at` (recorded before this is
        called): the issue already opened for it, else a new one; returns its number and
        address."""
        ...

    def decisions(self, issue: int) -> tuple[Decision, ...]:
        """Every decision stated on the issue so far, oldest first."""
        ...

    def tell(self, issue: int, text: str, *, once: str) -> None:
        """Say how the gate ended, once: nothing is said when the issue already carries the
        marker `once` (said before a kill, by a step that did not record it)."""
        ...


class ForgeApprovals:
    def __init__(self, forge: forges.Forge) -> None:
        self._forge = forge

    def open(
        self,
        spec: PromotionSpec,
        *,
        approvers: tuple[str, ...],
        requested_at: datetime,
        deadline: datetime,
    ) -> tuple[int, str]:
        marker = request_marker(spec, requested_at)
        found = self._forge.find_issue(marker=marker, opened_after=requested_at)
        if found is not None:  # opened by a step killed before it recorded the number
            return found.number, found.url
        body = "\n".join(
            [
                f"Headway asks for a decision on promotion `{spec.name}`:",
                "",
                f"* pipeline: `{spec.pipeline}`, environment: `{spec.environment}`",
                f"* image: `{spec.image}`",
                f"* requested by: `{spec.author}`",
                f"* approvers: {', '.join(f'`{a}`' for a in approvers) or 'none listed'}",
                f"* deadline: {format_time(deadline)} (no decision by then = denied)",
                "",
                "Comment exactly `approved` or `denied`. Anything else is conversation; an "
                "edited comment does not count; the author of the change cannot approve it.",
                "",
                forges.marker_line(marker),
            ]
        )
        title = f"Approve {spec.image} into {spec.environment} ({spec.name})"
        issue = self._forge.open_issue(title=title, body=body)
        return issue.number, issue.url

    def decisions(self, issue: int) -> tuple[Decision, ...]:
        found = forges.decisions(self._forge.comments(issue))
        return tuple(
            Decision(
                verdict="approve" if d.verdict is forges.Verdict.APPROVED else "deny",
                by=d.author,
                at=d.at,
                via="forge",
                comment=d.url,
            )
            for d in found
        )

    def tell(self, issue: int, text: str, *, once: str) -> None:
        if any(forges.carries_marker(c.body, once) for c in self._forge.comments(issue)):
            return
        self._forge.post_comment(issue, f"{text}\n\n{forges.marker_line(once)}")
