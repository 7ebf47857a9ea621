"""The review of one change: per Application, what changes, how a sync gets there, and what
the checks say. Every output format (text, Markdown, JSON) is written from this."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from headway.review.changes import ResourceChange
from headway.review.findings import MarkedFinding
from headway.review.sync_preview import SyncPreview

__all__ = ["AppChange", "AppReview", "Review"]


class AppChange(StrEnum):
    ADDED = "added"  # the Application exists only at HEAD
    REMOVED = "removed"  # only at BASE: Argo CD deletes its resources if it has the finalizer
    CHANGED = "changed"  # it renders differently
    UNCHANGED = "unchanged"  # the change touches what it reads, but it renders the same


@dataclass(frozen=True)
class AppReview:
    name: str
    namespace: str  # the destination namespace (what the render's objects default to)
    change: AppChange
    reasons: tuple[str, ...]  # why it counts as affected: changed files it reads, its spec
    resources: tuple[ResourceChange, ...] = ()
    sync: SyncPreview | None = None
    findings: tuple[MarkedFinding, ...] = ()
    errors: tuple[str, ...] = ()  # what failed to render, at which revision
    app_namespace: str = ""  # the Application's own metadata.namespace, as check names it

    @property
    def ref(self) -> str:
        """The Application as `headway check` and kubectl name it: `<namespace>/<name>`
        (its own namespace, not the destination's), `<name>` when it sets none."""
        return f"{self.app_namespace}/{self.name}" if self.app_namespace else self.name

    @property
    def title(self) -> str:
        """`ref`, then where it deploys: `argocd/web -> shop`."""
        return f"{self.ref} -> {self.namespace}" if self.namespace else self.ref

    @property
    def new_findings(self) -> int:
        return sum(1 for f in self.findings if f.new)


@dataclass(frozen=True)
class Review:
    base: str  # the revisions as given and their commits
    head: str
    base_commit: str
    head_commit: str
    changed_files: tuple[str, ...]
    apps: tuple[AppReview, ...]
    # HEAD's errors in the files the change touched (a YAML typo in an Application makes it
    # look gone: this says why)
    problems: tuple[str, ...] = ()

    @property
    def has_changes(self) -> bool:
        """Whether any Application renders differently (or appears, or goes)."""
        return any(a.change is not AppChange.UNCHANGED for a in self.apps)

    @property
    def head_errors(self) -> tuple[str, ...]:
        found = tuple(e for a in self.apps for e in a.errors if e.startswith("HEAD"))
        return (*self.problems, *found)
