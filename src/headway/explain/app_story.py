"""The story of an Application's last sync operation: who started it and to which revision,
each (phase, wave) applied with what it did to each resource, each wait with the resource and
its health, and how it ended. Purely computational.

From the decision journal when it has the operation (named by its `startedAt`); otherwise
from `status.operationState`, which keeps the results but not in which wave they were applied
nor why a wave waited - the story says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.decisions import DecisionRecord
from headway.explain.rollout_story import event_line, in_order
from headway.explain.story import Story, StoryLine

__all__ = ["app_story"]


def _step_name(data: Mapping[str, Any]) -> str:
    phase, wave = data.get("phase") or "", data.get("wave")
    if wave is None:
        return str(phase or "the operation")
    return f"{phase} wave {wave}" if phase else f"wave {wave}"


def _resource(raw: Mapping[str, Any]) -> str:
    group = f"{raw['group']}/" if raw.get("group") else ""
    namespace = f"{raw['namespace']}/" if raw.get("namespace") else ""
    status = raw.get("hookPhase") or raw.get("status") or ""
    message = f" ({raw['message']})" if raw.get("message") else ""
    return f"{group}{raw.get('kind')}/{namespace}{raw.get('name')}: {status}{message}"


def _who(data: Mapping[str, Any]) -> str:
    initiated = data.get("initiatedBy") or {}
    if initiated.get("automated"):
        return "the automated sync policy"
    return str(initiated.get("username") or "a user")


def _record_lines(record: DecisionRecord) -> list[StoryLine]:
    data = record.data
    if record.type == "started":
        revisions = ", ".join(str(r)[:12] for r in data.get("revisions") or [] if r) or "HEAD"
        retry = f" (retry {data['retryCount']})" if data.get("retryCount") else ""
        text = f"sync started by {_who(data)} to {revisions}{retry}"
        return [StoryLine(record.at, "started", text, data)]
    if record.type == "applied":
        resources = data.get("resources") or []
        head = StoryLine(
            record.at, "applied", f"{_step_name(data)}: applied {len(resources)}", data
        )
        return [head, *(StoryLine(record.at, "detail", _resource(r), depth=1) for r in resources)]
    if record.type in ("waiting", "passed"):
        return [StoryLine(record.at, record.type, str(data.get("message", "")), data)]
    if record.type == "finished":
        text = f"finished {data.get('phase')}: {data.get('message', '')}"
        return [StoryLine(record.at, "finished", text, data)]
    return [StoryLine(record.at, record.type, str(dict(data)), data)]


def _status_lines(state: Mapping[str, Any]) -> list[StoryLine]:
    started = str(state.get("startedAt") or "")
    operation = state.get("operation") or {}
    lines = [StoryLine(started, "started", f"sync started by {_who(operation)}")]
    results = (state.get("syncResult") or {}).get("resources") or []
    by_phase: dict[str, list[Mapping[str, Any]]] = {}
    for raw in results:
        by_phase.setdefault(str(raw.get("syncPhase") or "Sync"), []).append(raw)
    for phase, items in by_phase.items():
        lines.append(StoryLine(started, "applied", f"{phase}: {len(items)} results"))
        lines.extend(StoryLine(started, "detail", _resource(r), depth=1) for r in items)
    if state.get("phase") in ("Succeeded", "Failed", "Error"):
        text = f"finished {state.get('phase')}: {state.get('message', '')}"
        lines.append(StoryLine(str(state.get("finishedAt") or ""), "finished", text))
    elif state.get("message"):
        lines.append(StoryLine("", "waiting", f"now: {state.get('message')}"))
    return lines


def _outcome(state: Mapping[str, Any]) -> str:
    if not state:
        return "no sync operation has run"
    phase = state.get("phase") or "Unknown"
    message = f": {state['message']}" if state.get("message") else ""
    return f"last sync {phase}{message}"


def app_story(
    app: Mapping[str, Any],
    *,
    records: Sequence[DecisionRecord] = (),
    dropped: int = 0,
    events: Sequence[Mapping[str, Any]] = (),
) -> Story:
    meta = app.get("metadata") or {}
    state = (app.get("status") or {}).get("operationState") or {}
    notes: list[str] = []
    sources = ["status"]
    if records:
        sources.append("journal")
        lines = [line for record in records for line in _record_lines(record)]
    elif state:
        lines = _status_lines(state)
        notes.append(
            "this operation is not in the decision journal: the waves each resource was "
            "applied in, and why a wave waited, are not known"
        )
    else:
        lines = []
    if dropped:
        notes.append(f"{dropped} records past the journal's bound were not kept")
    lines.extend(event_line(e) for e in events)
    if events:
        sources.append("events")
    return Story(
        subject=f"Application {meta.get('namespace', '')}/{meta.get('name', '')}",
        outcome=_outcome(state),
        lines=in_order(lines),
        sources=tuple(sources),
        notes=tuple(notes),
    )
