"""`headway diff` as text and as JSON (schema `headway.diff/v1`, docs/diff-review.md).

Every string leaves through `redaction.redact_url_credentials`: a repoURL with a token in it
can reach a reason or a render error. Secret values never get this far (`review.changes`
masks them before the diff is written).
"""

from __future__ import annotations

import json
from typing import Any

from headway.redaction import redact_url_credentials
from headway.review.changes import ChangeKind, ResourceChange
from headway.review.findings import MarkedFinding
from headway.review.model import AppChange, AppReview, Review
from headway.review.sync_preview import SyncPreview

__all__ = ["SCHEMA", "change_counts", "render_json", "render_text", "summary_line", "sync_lines"]

SCHEMA = "headway.diff/v1"


def change_counts(app: AppReview) -> dict[ChangeKind, int]:
    counts = dict.fromkeys(ChangeKind, 0)
    for resource in app.resources:
        counts[resource.kind] += 1
    return counts


def summary_line(review: Review) -> str:
    by_change = {c: sum(1 for a in review.apps if a.change is c) for c in AppChange}
    parts = [f"{n} {c}" for c, n in by_change.items() if n]
    new = sum(a.new_findings for a in review.apps)
    affected = len(review.apps)
    noun = "Application" if affected == 1 else "Applications"
    head = f"{affected} {noun} affected" + (f" ({', '.join(parts)})" if parts else "")
    return f"{head}; {new} new check finding{'' if new == 1 else 's'}"


def sync_lines(sync: SyncPreview) -> list[str]:
    """The sync HEAD starts, one line per step, in order."""
    lines = []
    for step in sync.steps:
        parts = [f"hook {h}" for h in step.hooks]
        parts += [f"apply {a}" for a in step.applies]
        parts += [f"prune {p}" for p in step.prunes]
        if step.unchanged:
            parts.append(f"{step.unchanged} unchanged")
        lines.append(f"{step.title}: {'; '.join(parts) if parts else 'nothing'}")
    if sync.auto_sync_keeps_removed:
        lines.append(
            "auto-sync does not prune (syncPolicy.automated.prune is false): removed "
            "resources stay until a sync with prune"
        )
    lines.extend(f"problem: {p}" for p in sync.problems)
    return lines


def finding_line(marked: MarkedFinding) -> str:
    f = marked.finding
    tag = "NEW " if marked.new else ""
    return f"{tag}{f.rule} {f.severity} {f.file}:{f.line} {f.resource}: {f.message}"


def _resource_counts(app: AppReview) -> str:
    counts = change_counts(app)
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no resource changes"


def render_text(review: Review) -> str:
    lines = [
        f"headway diff {review.base}..{review.head} "
        f"({review.base_commit[:12]}..{review.head_commit[:12]})",
        summary_line(review),
        *(f"error: {p}" for p in review.problems),
    ]
    for app in review.apps:
        lines += [
            "",
            f"== Application {app.title}: {app.change} ({_resource_counts(app)})",
        ]
        lines += [f"   because {r}" for r in app.reasons]
        lines += [f"   error: {e}" for e in app.errors]
        if app.sync is not None and app.change is not AppChange.UNCHANGED:
            lines += ["   sync:", *(f"     {s}" for s in sync_lines(app.sync))]
        lines += [f"   {finding_line(m)}" for m in app.findings]
        for resource in app.resources:
            lines += [f"--- {resource.title} ({resource.kind})", *resource.diff_lines]
    return redact_url_credentials("\n".join(lines)) + "\n"


def _resource_json(resource: ResourceChange) -> dict[str, Any]:
    group, kind, namespace, name = resource.key
    return {
        "group": group,
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "change": str(resource.kind),
        "diff": list(resource.diff_lines),
    }


def _sync_json(sync: SyncPreview | None) -> dict[str, Any] | None:
    if sync is None:
        return None
    steps = [
        {
            "phase": s.phase,
            "wave": s.wave,
            "hooks": list(s.hooks),
            "applies": list(s.applies),
            "unchanged": s.unchanged,
            "prunes": list(s.prunes),
        }
        for s in sync.steps
    ]
    return {
        "steps": steps,
        "problems": list(sync.problems),
        "autoSyncKeepsRemoved": sync.auto_sync_keeps_removed,
    }


def _app_json(app: AppReview) -> dict[str, Any]:
    return {
        "name": app.name,
        "namespace": app.namespace,
        "appNamespace": app.app_namespace,
        "change": str(app.change),
        "reasons": list(app.reasons),
        "resources": [_resource_json(r) for r in app.resources],
        "sync": _sync_json(app.sync),
        "findings": [{**m.finding.to_json(), "new": m.new} for m in app.findings],
        "errors": list(app.errors),
    }


def render_json(review: Review) -> str:
    document = {
        "schema": SCHEMA,
        "base": {"revision": review.base, "commit": review.base_commit},
        "head": {"revision": review.head, "commit": review.head_commit},
        "changedFiles": list(review.changed_files),
        "problems": list(review.problems),
        "summary": {
            **{str(c): sum(1 for a in review.apps if a.change is c) for c in AppChange},
            "newFindings": sum(a.new_findings for a in review.apps),
            "headErrors": len(review.head_errors),
        },
        "apps": [_app_json(a) for a in review.apps],
    }
    return redact_url_credentials(json.dumps(document, indent=2, sort_keys=False)) + "\n"
