"""Problems found in manifests, each naming file, line, object and field."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["Diagnostic", "Severity"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Diagnostic:
    """One problem in one field of one object.

    Rendered as `file:line: Kind/name: field.path: message`, the form editors and CI
    annotations understand.
    """

    file: str
    line: int
    kind: str
    name: str
    field: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        # line 0 means "no line" (a missing path, an unreadable file): never print it
        where = f"{self.file}:{self.line}" if self.line > 0 else self.file
        obj = f"{self.kind}/{self.name or '<unnamed>'}" if self.kind else ""
        parts = [where]
        if obj:
            parts.append(obj)
        if self.field:
            parts.append(self.field)
        prefix = ": ".join(parts)
        label = "" if self.severity is Severity.ERROR else f"{self.severity}: "
        return f"{prefix}: {label}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "kind": self.kind,
            "name": self.name,
            "field": self.field,
            "severity": str(self.severity),
            "message": self.message,
        }
