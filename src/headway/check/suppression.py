"""Per-resource opt-outs: `headway.dev/check-disable: "HW101: why this is fine here"`.

An opt-out must carry a reason: a bare rule id (or an unknown one) does not silence anything
and is itself reported, so every exception in the repository says why it is safe.
Several opt-outs are separated by `;` or new lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at, resource_id
from headway.check.manifest import annotation
from headway.model.yamlload import Document

__all__ = ["DISABLE_ANNOTATION", "SUPPRESSION_WITHOUT_REASON", "Suppressions"]

DISABLE_ANNOTATION = "headway.dev/check-disable"

SUPPRESSION_WITHOUT_REASON = Rule(
    id="HW001",
    slug="check-disable-without-reason",
    severity=Severity.ERROR,
    title="A check is disabled on a resource without a reason",
    rationale="An exception nobody can explain outlives the reason it was made; the seeds' "
    "audits found settings nobody could justify (seed 002 §5.5).",
    hint='Write the reason after the id: `headway.dev/check-disable: "HW101: <why>"`.',
)

_ENTRY = re.compile(r"^\s*(?P<id>[A-Za-z]+\d+)\s*(?::\s*(?P<reason>.*\S)?)?\s*$")


@dataclass(frozen=True)
class Suppressions:
    """Which (file, resource) pairs opted out of which rules, and the malformed opt-outs."""

    honored: frozenset[tuple[str, str, str]]
    problems: tuple[Finding, ...]

    def silences(self, finding: Finding) -> bool:
        return (finding.file, finding.resource, finding.rule) in self.honored


def collect_suppressions(ctx: CheckContext, known_rules: Iterable[str]) -> Suppressions:
    known = set(known_rules)
    honored: set[tuple[str, str, str]] = set()
    problems: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for doc, app in _documents_with_app(ctx):
        if (doc.file, doc.line) in seen:
            continue
        seen.add((doc.file, doc.line))
        raw = annotation(doc.obj, DISABLE_ANNOTATION)
        if raw is None:
            continue
        for rule_id, reason in _entries(raw):
            problem = _entry_problem(rule_id, reason, known)
            if problem is None:
                honored.add((doc.file, resource_id(doc.obj), rule_id.upper()))
                continue
            path = ("metadata", "annotations", DISABLE_ANNOTATION)
            problems.append(
                finding_at(SUPPRESSION_WITHOUT_REASON, doc, path=path, message=problem, app=app)
            )
    return Suppressions(frozenset(honored), tuple(problems))


def _documents_with_app(ctx: CheckContext) -> Iterator[tuple[Document, str]]:
    for unit in ctx.units:
        if unit.application is not None:
            yield unit.application, unit.name
        for doc in unit.objects:
            yield doc, unit.name


def _entries(raw: str) -> Iterator[tuple[str, str]]:
    for part in re.split(r"[;\n]", raw):
        if not part.strip():
            continue
        match = _ENTRY.match(part)
        if match is None:
            yield part.strip(), ""
        else:
            yield match.group("id"), match.group("reason") or ""


def _entry_problem(rule_id: str, reason: str, known: set[str]) -> str | None:
    if rule_id.upper() not in known:
        return (
            f"{DISABLE_ANNOTATION} names {rule_id!r}, which is no Headway rule: nothing is "
            "disabled, and a typo here hides nothing but also protects nothing"
        )
    if not reason:
        return (
            f"{DISABLE_ANNOTATION} disables {rule_id.upper()} without a reason: the opt-out is "
            "ignored, because an exception nobody can explain is the next incident's cause"
        )
    return None
