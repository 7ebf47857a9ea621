"""Validate manifests given as text; every problem becomes one diagnostic. Pure.

Nothing here raises on bad input. Finding and reading files is the edge's job
(`headway.source.manifest_files`); this module only sees their text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from headway.model import argocd_cm, manifests, support
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document, load_documents, paused_gc

__all__ = [
    "ValidationReport",
    "file_problem",
    "validate_documents",
    "validate_text",
]


@dataclass(frozen=True)
class ValidationReport:
    files: int
    objects: int
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    @property
    def ok(self) -> bool:
        return self.count(Severity.ERROR) == 0


def validate_documents(
    docs: Iterable[Document], *, memo: manifests.ParseMemo | None = None
) -> list[Diagnostic]:
    """Diagnostics for already-loaded documents, in document and line order (their typed
    views kept in `memo`, when given, for whoever reads them next)."""
    diagnostics: list[Diagnostic] = []
    with paused_gc():
        for document in docs:
            if manifests.is_object(document):
                _, found = manifests.parse_manifest(document, memo=memo)
                found = _refused_unknown_fields(found, _unsupported(document))
                found.extend(argocd_cm.argocd_cm_diagnostics(document))
                diagnostics.extend(sorted(found, key=lambda d: d.line))
    return diagnostics


_UNKNOWN = "unknown field"
_IGNORED = "; it is ignored"


def _refused_unknown_fields(found: list[Diagnostic], gaps: list[Diagnostic]) -> list[Diagnostic]:
    """`found` and `gaps`, an unknown field that a renderer refuses said once: an Application's
    `helm.release` was a warning "unknown field (did you mean releaseName?); it is ignored"
    and an error "not supported by Headway yet: the render refuses the Application" at the
    same line. It is one error, with the nearest name and what Argo CD would do."""
    refused = {gap.field for gap in gaps}
    unknown = {
        d.field: d.message.removesuffix(_IGNORED)
        for d in found
        if d.severity is Severity.WARNING and d.field in refused and d.message.startswith(_UNKNOWN)
    }
    if not unknown:
        return [*found, *gaps]
    kept = [d for d in found if not (d.severity is Severity.WARNING and d.field in unknown)]
    refusal = ": Argo CD would ignore it; the render refuses the Application rather than drop it"
    said = [
        replace(gap, message=unknown[gap.field] + refusal) if gap.field in unknown else gap
        for gap in gaps
    ]
    return kept + said


def _unsupported(document: Document) -> list[Diagnostic]:
    """What the runtime would refuse in an `argoproj.io` object (`model/support.py`)."""
    obj = document.obj
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    if not isinstance(api_version, str) or not api_version.startswith(f"{manifests.ARGO_GROUP}/"):
        return []
    return support.document_gaps(document, document.kind)


def validate_text(text: str, file: str) -> ValidationReport:
    """Load and validate one file's text."""
    loaded = load_documents(text, file)
    objects = [d for d in loaded.documents if manifests.is_object(d)]
    diagnostics = sorted([*validate_documents(objects), *loaded.diagnostics], key=lambda d: d.line)
    return ValidationReport(1, len(objects), diagnostics)


def file_problem(file: str, message: str) -> Diagnostic:
    """A diagnostic about a whole file (missing, unreadable), on its first line."""
    return Diagnostic(file, 1, "", "", "", Severity.ERROR, message)
