"""`headway diff --format markdown`: a pull-request comment.

A summary table, then one collapsed `<details>` section per Application (why it is affected,
the sync HEAD starts, check findings with the new ones marked, a diff block per resource).
The comment is bounded: GitHub refuses comments over 65,536 characters, so sections are
added while they fit `limit`; a diff that does not fit is left out with a note, and a final
note says what was truncated. Secret values were masked before this point; URL credentials
are masked here.
"""

from __future__ import annotations

import html
import re

from headway.cli.diff import DEFAULT_LIMIT
from headway.cli.diff_report import change_counts, finding_line, summary_line, sync_lines
from headway.redaction import redact_url_credentials
from headway.review.changes import ChangeKind, ResourceChange
from headway.review.model import AppChange, AppReview, Review

__all__ = ["DEFAULT_LIMIT", "MARKER", "render_markdown"]

MARKER = "<!-- headway-diff -->"  # lets a CI job find and update its earlier comment
_BACKTICKS = re.compile(r"`+")


def _fence(lines: tuple[str, ...]) -> str:
    """A code fence longer than any backtick run in the block, so no line can close it."""
    longest = max((len(m.group()) for line in lines for m in _BACKTICKS.finditer(line)), default=0)
    return "`" * max(3, longest + 1)


def _table(review: Review) -> list[str]:
    rows = ["| Application | Change | Resources (+ / − / ~) | New findings |", "|---|---|---|---|"]
    for app in review.apps:
        counts = change_counts(app)
        added, removed, changed = (
            counts[ChangeKind.ADDED],
            counts[ChangeKind.REMOVED],
            counts[ChangeKind.CHANGED],
        )
        rows.append(
            f"| `{app.title}` | {app.change} | {added} / {removed} / {changed} "
            f"| {app.new_findings} |"
        )
    return rows


def _resource_block(resource: ResourceChange) -> str:
    fence = _fence(resource.diff_lines)
    body = "\n".join(resource.diff_lines)
    return f"**{resource.kind}** `{resource.title}`\n\n{fence}diff\n{body}\n{fence}\n"


def _app_head(app: AppReview) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in change_counts(app).items() if n) or "no changes"
    new = f", {app.new_findings} new finding(s)" if app.new_findings else ""
    title = html.escape(app.title)
    parts = [f"<details><summary><b>{title}</b>: {app.change} ({counts}{new})</summary>\n"]
    parts += [f"- because {html.escape(r)}" for r in app.reasons]
    parts += [f"- :x: {html.escape(e)}" for e in app.errors]
    if app.sync is not None and app.change is not AppChange.UNCHANGED:
        parts += ["", "**Sync**", *(f"1. {html.escape(s)}" for s in sync_lines(app.sync))]
    if app.findings:
        parts += ["", "**Check findings on HEAD**"]
        parts += [
            f"- {':new: ' if m.new else ''}{html.escape(finding_line(m).removeprefix('NEW '))}"
            for m in app.findings
        ]
    return "\n".join(parts) + "\n\n"


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.parts: list[str] = []

    def add(self, text: str, *, reserve: int = 0) -> bool:
        """Append `text` when it fits, keeping `reserve` characters free for what must follow."""
        if len(text) + reserve > self.left:
            return False
        self.parts.append(text)
        self.left -= len(text)
        return True


_CLOSE = "</details>\n\n"
_NOTE_ROOM = 400


def render_markdown(review: Review, *, limit: int = DEFAULT_LIMIT) -> str:
    budget = _Budget(limit)
    head = [MARKER, f"### Headway diff `{review.base}..{review.head}`", "", summary_line(review)]
    head += ["", *(f"> :x: {html.escape(p)}" for p in review.problems)] if review.problems else []
    head += ["", *_table(review), "", ""] if review.apps else [""]
    budget.add(redact_url_credentials("\n".join(head)))
    omitted_diffs, omitted_apps = 0, 0
    for app in review.apps:
        section = redact_url_credentials(_app_head(app))
        if not budget.add(section, reserve=len(_CLOSE) + _NOTE_ROOM):
            omitted_apps += 1
            continue
        for resource in app.resources:
            block = redact_url_credentials(_resource_block(resource))
            if not budget.add(block, reserve=len(_CLOSE) + _NOTE_ROOM):
                omitted_diffs += 1
                budget.add(f"_`{resource.title}`: diff left out (size limit)_\n\n")
        budget.parts.append(_CLOSE)
    if omitted_diffs or omitted_apps:
        budget.parts.append(_truncated_note(review, omitted_diffs, omitted_apps, limit))
    return "".join(budget.parts)


def _truncated_note(review: Review, diffs: int, apps: int, limit: int) -> str:
    what = []
    if diffs:
        what.append(f"{diffs} resource diff(s)")
    if apps:
        what.append(f"{apps} Application section(s)")
    return (
        f"> **Truncated**: {' and '.join(what)} left out to stay under {limit} characters. "
        f"Run `headway diff {review.base}..{review.head}` for the full diff.\n"
    )
