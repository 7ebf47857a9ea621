"""Which of HEAD's check findings the change brought in. Purely computational.

A finding is the same across revisions when its rule, Application, resource and message are
the same: line numbers move with unrelated edits, so they are not part of its identity.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from headway.check.findings import Finding

__all__ = ["MarkedFinding", "mark_findings"]


@dataclass(frozen=True)
class MarkedFinding:
    finding: Finding
    new: bool  # absent at BASE


def _identity(finding: Finding) -> tuple[str, str, str, str]:
    return finding.rule, finding.app, finding.resource, finding.message


def mark_findings(
    head: Sequence[Finding], base: Sequence[Finding], *, apps: Collection[str]
) -> dict[str, tuple[MarkedFinding, ...]]:
    """HEAD's findings about the Applications in `apps`, grouped by Application, each marked
    new when BASE had no finding of the same identity."""
    seen = {_identity(f) for f in base}
    grouped: dict[str, list[MarkedFinding]] = {name: [] for name in apps}
    for finding in head:
        if finding.app in grouped:
            grouped[finding.app].append(MarkedFinding(finding, _identity(finding) not in seen))
    return {name: tuple(marked) for name, marked in grouped.items()}
