"""An Application defined twice: two files (or two documents, or an Application and an
ApplicationSet's generated one) with one namespace and name.

Argo CD keeps one of them (whichever was applied last; an app-of-apps shows
`RepeatedResourceWarning`, a second ApplicationSet is refused ownership), so the other
definition's source and destination are never deployed. `headway check` renders and checks
the first only: it says so, at the second.
"""

from __future__ import annotations

from collections.abc import Iterable

from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at

__all__ = ["REPEATED_APPLICATION", "check_repeated_applications"]

REPEATED_APPLICATION = Rule(
    id="HW321",
    slug="repeated-application",
    severity=Severity.ERROR,
    title="Two definitions of one Application (the same namespace and name)",
    rationale="Only one of them exists in the cluster: the other's source and destination are "
    "never deployed, and which one wins depends on the order they are applied in. A copied "
    "Application whose name was not changed deploys one environment where two were meant.",
    hint="Give each Application its own `metadata.name` (or delete the copy).",
)


def check_repeated_applications(ctx: CheckContext) -> Iterable[Finding]:
    for kept, other in ctx.repeated_applications:
        where = f"{kept.file}:{kept.line}"
        message = (
            f"Application/{other.name} is already defined at {where}: only one of the two "
            "can exist, and this one was not checked"
        )
        yield finding_at(REPEATED_APPLICATION, other, path=("metadata", "name"), message=message)
