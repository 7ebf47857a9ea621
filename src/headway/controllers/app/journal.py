"""The Application controller's share of the decision journal (`headway.decisions`): what each
written step of a sync operation adds (`headway.sync.operation_journal` decides), recorded
after the status write succeeded, so a refused write leaves no record of a step that did not
happen."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from headway.decisions import DecisionJournal, Subject
from headway.redaction import redact_urls_in
from headway.sync.operation_journal import operation_records

__all__ = ["record_operation_step"]


def record_operation_step(
    journal: DecisionJournal,
    *,
    app: Mapping[str, Any],
    before: object,
    after: object,
    at: datetime,
) -> None:
    if not isinstance(after, Mapping):
        return
    meta = app.get("metadata") or {}
    subject = Subject("Application", str(meta.get("namespace") or ""), str(meta.get("name")))
    previous = before if isinstance(before, Mapping) else None
    for kind, data in operation_records(previous, after):
        journal.record(
            subject,
            operation=str(after.get("startedAt")),
            at=at,
            type=kind,
            data=redact_urls_in(data),
        )
