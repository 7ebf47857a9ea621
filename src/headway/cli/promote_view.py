"""How `headway promotions list|get` print promotions: plain text, never truncated."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from headway.model.obj import Obj
from headway.promotion.record import read_spec, read_status

__all__ = ["details", "release_line", "table"]


def table(promotions: Sequence[Obj], *, pipeline: str | None = None) -> str:
    rows = [["NAME", "PIPELINE", "ENV", "IMAGE", "PHASE", "BY", "MESSAGE"]]
    specs = [(read_spec(p), read_status(p)) for p in promotions]
    for spec, status in sorted(specs, key=lambda pair: (pair[0].requested_at, pair[0].name)):
        if pipeline is not None and spec.pipeline != pipeline:
            continue
        by = spec.author + (" (break-glass)" if spec.break_glass else "")
        rows.append(
            [
                spec.name,
                spec.pipeline,
                spec.environment,
                spec.image,
                status.phase.value,
                by,
                status.message,
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    )


def release_line(obj: Obj, siblings: Sequence[Obj]) -> str:
    """The image's way through the pipeline so far: each environment's latest promotion of
    it, in the order they were requested (`dev Succeeded -> staging Succeeded -> prod ...`)."""
    spec = read_spec(obj)
    latest: dict[str, tuple[datetime, str]] = {}
    for other in siblings:
        theirs = read_spec(other)
        if theirs.pipeline != spec.pipeline or theirs.image != spec.image:
            continue
        known = latest.get(theirs.environment)
        if known is None or known[0] <= theirs.requested_at:
            latest[theirs.environment] = (theirs.requested_at, read_status(other).phase.value)
    ordered = sorted(latest.items(), key=lambda item: item[1][0])
    return " -> ".join(f"{env} {phase}" for env, (_, phase) in ordered)


def details(obj: Obj, siblings: Sequence[Obj] = ()) -> str:
    spec, status = read_spec(obj), read_status(obj)
    lines = [
        f"Name:        {spec.name}",
        f"Pipeline:    {spec.pipeline}",
        f"Environment: {spec.environment}",
        f"Image:       {spec.image}",
        f"Requested:   {spec.requested_at.isoformat()} by {spec.author} ({spec.origin})",
        f"Phase:       {status.phase.value}",
        f"Message:     {status.message}",
    ]
    if siblings:
        lines.append(f"Release:     {release_line(obj, siblings)}")
    if spec.break_glass is not None:
        lines.append(f"Break-glass: {spec.break_glass.by}: {spec.break_glass.reason}")
    if spec.hotfix_reason:
        lines.append(f"Hotfix:      {spec.hotfix_reason} (analysis skipped, nonce {spec.name})")
    if status.previous_image:
        lines.append(f"Previous:    {status.previous_image}")
    if status.commit:
        lines.append(f"Commit:      {status.commit}")
    if status.revert_commit:
        lines.append(f"Re-commit:   {status.revert_commit} (previous image back)")
    if status.next_promotion:
        lines.append(f"Next:        {status.next_promotion}")
    if status.approval is not None:
        a = status.approval
        lines.append(
            f"Approval:    {a.verdict}, requested {a.requested_at.isoformat()}, "
            f"deadline {a.deadline.isoformat()}"
        )
        if a.decided_by:
            lines.append(f"  decided by {a.decided_by} at {a.decided_at} via {a.via}")
        lines.extend(f"  ignored: {text}" for text in a.ignored)
    for d in spec.decisions:
        comment = f" ({d.comment})" if d.comment else ""
        lines.append(
            f"Decision:    {d.verdict} by {d.by} at {d.at.isoformat()} via {d.via}{comment}"
        )
    lines.extend(f"Note:        {note}" for note in status.notes)
    return "\n".join(lines)
