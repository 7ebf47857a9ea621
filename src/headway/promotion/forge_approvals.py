"""Approvals through a forge's issue comments: the gate opens an issue, reads `approved` /
`denied` comments back as decisions, and says how it ended.

A comment counts as a decision only as `forge.parse_decision` reads it (exact body, a person,
never edited); whether its author may decide is still the gate's call
(`approval.judge_gate`: the allow-list, not the change's author, before the deadline). The
forge authenticates the comment's author, which the CLI's `--as` cannot do.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from headway.kubetime import format_time
from headway.promotion import forge as forges
from headway.promotion.approval import Decision
from headway.promotion.record import PromotionSpec

__all__ = ["ApprovalChannel", "ForgeApprovals"]


class ApprovalChannel(Protocol):
    def open(
        self, spec: PromotionSpec, *, approvers: tuple[str, ...], deadline: datetime
    ) -> tuple[int, str]:
        """Ask for a decision; returns the issue's number and address."""
        ...

    def decisions(self, issue: int) -> tuple[Decision, ...]:
        """Every decision stated on the issue so far, oldest first."""
        ...

    def tell(self, issue: int, text: str) -> None:
        """Say how the gate ended."""
        ...


class ForgeApprovals:
    def __init__(self, forge: forges.Forge) -> None:
        self._forge = forge

    def open(
        self, spec: PromotionSpec, *, approvers: tuple[str, ...], deadline: datetime
    ) -> tuple[int, str]:
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

    def tell(self, issue: int, text: str) -> None:
        self._forge.post_comment(issue, text)
