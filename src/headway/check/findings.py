"""What a check reports: rules (stable id, slug, severity, rationale) and findings.

A `Rule` is metadata only; the code that finds problems lives in one module per rule family
and is wired to its rule in `registry.py`. A `Finding` names the rule, where the problem is
(file, line, resource, Application), what will go wrong in production, and how to fix it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from headway.model.diagnostics import Severity
from headway.model.yamlload import Document, PathPart

__all__ = ["Finding", "Rule", "Severity", "finding_at", "resource_id"]


@dataclass(frozen=True)
class Rule:
    """One check: `HW101` / `wave-before-target`, its default severity and why it exists."""

    id: str
    slug: str
    severity: Severity
    title: str
    rationale: str
    hint: str


@dataclass(frozen=True)
class Finding:
    rule: str
    slug: str
    severity: Severity
    file: str
    line: int
    app: str
    resource: str
    message: str
    hint: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "slug": self.slug,
            "severity": str(self.severity),
            "file": self.file,
            "line": self.line,
            "app": self.app,
            "resource": self.resource,
            "message": self.message,
            "hint": self.hint,
        }

    def with_app(self, app: str) -> Finding:
        return self if self.app else replace(self, app=app)


def resource_id(obj: Any) -> str:
    """`Kind/namespace/name`, or `Kind/name` for objects with no namespace in the manifest."""
    if not isinstance(obj, dict):
        return ""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    kind = str(obj.get("kind", ""))
    name = str(meta.get("name") or meta.get("generateName") or "")
    namespace = meta.get("namespace")
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def finding_at(
    rule: Rule,
    doc: Document,
    *,
    path: Sequence[PathPart] = (),
    message: str,
    app: str = "",
    severity: Severity | None = None,
    hint: str | None = None,
) -> Finding:
    """A finding for `rule` located at field `path` of `doc`."""
    return Finding(
        rule=rule.id,
        slug=rule.slug,
        severity=severity or rule.severity,
        file=doc.file,
        line=doc.line_of(path),
        app=app,
        resource=resource_id(doc.obj),
        message=message,
        hint=hint or rule.hint,
    )
