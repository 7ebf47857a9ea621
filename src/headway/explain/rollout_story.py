"""The story of a Rollout's last update: its analysis runs, every measurement with the query as
it ran, the conditions and limits it was judged by, each run's verdict and reason, the
Rollout's Events, and where it ended. Purely computational.

The last update is the newest revision the runs were started for (`rollouts-pod-template-hash`
of the Rollout's `currentPodHash`, else of the newest run). Measurements come from the
decision journal when it has the run (every one, as measured); otherwise from the run's
status, which keeps only the last `measurementRetention` per metric - the story says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from headway.decisions import DecisionRecord
from headway.explain.story import Story, StoryLine
from headway.kubetime import parse_time

__all__ = ["RunEvidence", "event_line", "in_order", "last_update_runs", "rollout_story"]

HASH_LABEL = "rollouts-pod-template-hash"
STEP_LABEL = "step-index"


@dataclass(frozen=True)
class RunEvidence:
    """One AnalysisRun and what the journal kept of it (`records` empty: nothing kept)."""

    run: Mapping[str, Any]
    records: Sequence[DecisionRecord] = ()
    dropped: int = 0

    @property
    def name(self) -> str:
        return str((self.run.get("metadata") or {}).get("name", ""))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _meta(obj).get("labels") or {}


def last_update_runs(
    rollout: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The runs of the Rollout's last update, oldest first."""
    ordered = sorted(runs, key=lambda r: str(_meta(r).get("creationTimestamp", "")))
    if not ordered:
        return []
    current = str((rollout.get("status") or {}).get("currentPodHash") or "")
    wanted = current if any(_labels(r).get(HASH_LABEL) == current for r in ordered) else ""
    wanted = wanted or str(_labels(ordered[-1]).get(HASH_LABEL, ""))
    return [r for r in ordered if str(_labels(r).get(HASH_LABEL, "")) == wanted]


def _outcome(rollout: Mapping[str, Any]) -> str:
    status = rollout.get("status") or {}
    phase = str(status.get("phase") or "Unknown")
    steps = ((rollout.get("spec") or {}).get("strategy") or {}).get("canary") or {}
    total = len(steps.get("steps") or [])
    where = ""
    if total and status.get("currentStepIndex") is not None:
        where = f" at step {status.get('currentStepIndex')} of {total}"
    if status.get("abort"):
        return f"aborted{where}: {status.get('message') or 'no reason recorded'} ({phase})"
    message = f": {status['message']}" if status.get("message") else ""
    return f"{phase}{where}{message}"


def _judged_by(judged: Mapping[str, Any]) -> str:
    parts = [
        f"{key} `{judged[key]}`"
        for key in ("successCondition", "failureCondition")
        if judged.get(key)
    ]
    limits = [f"failureLimit {judged['failureLimit']}"] if "failureLimit" in judged else []
    limits += [f"{key} {judged[key]}" for key in ("inconclusiveLimit", "count") if judged.get(key)]
    return "; ".join([*parts, *limits])


def _query(metadata: Mapping[str, Any]) -> list[str]:
    """What the provider says it ran: a resolved query, a URL, a judge's statistic."""
    return [f"{key}: {value}" for key, value in sorted(metadata.items()) if key != "judge.state"]


def _measurement_lines(record: DecisionRecord) -> list[StoryLine]:
    data = record.data
    value = data.get("value")
    shown = "no value" if value in (None, "") else f"value {value}"
    text = f"metric {data.get('metric')}: {shown} -> {data.get('phase')}"
    if data.get("message"):
        text += f" ({data['message']})"
    lines = [StoryLine(record.at, "measurement", text, data)]
    details = _query(data.get("metadata") or {})
    judged = _judged_by(data.get("judgedBy") or {})
    if judged:
        details.append(f"judged by {judged}")
    lines.extend(StoryLine(record.at, "detail", d, depth=1) for d in details)
    return lines


def _verdict_lines(run: str, record: DecisionRecord) -> list[StoryLine]:
    data = record.data
    text = f"AnalysisRun {run} ended {data.get('phase')}"
    if data.get("message"):
        text += f": {data['message']}"
    lines = [StoryLine(record.at, "verdict", text, data)]
    for metric in data.get("metrics") or []:
        reason = f": {metric.get('reason')}" if metric.get("reason") else ""
        dry = " (dry run)" if metric.get("dryRun") else ""
        detail = f"metric {metric.get('metric')} {metric.get('phase')}{dry}{reason}"
        lines.append(StoryLine(record.at, "detail", detail, depth=1))
    return lines


def _status_lines(evidence: RunEvidence) -> list[StoryLine]:
    """What the run's status still holds, for a run the journal does not have. A hand-edited
    status of the wrong shape tells what it can (entries that are not objects are skipped)."""
    status = _mapping(evidence.run.get("status"))
    results = _mappings(status.get("metricResults"))
    lines: list[StoryLine] = []
    for result in results:
        for m in _mappings(result.get("measurements")):
            value = m.get("value")
            shown = "no value" if value in (None, "") else f"value {value}"
            text = f"metric {result.get('name')}: {shown} -> {m.get('phase')}"
            at = str(m.get("finishedAt") or m.get("startedAt") or "")
            lines.append(StoryLine(at, "measurement", text, m))
            lines.extend(
                StoryLine(at, "detail", d, depth=1) for d in _query(_mapping(m.get("metadata")))
            )
    if status.get("phase") in ("Successful", "Failed", "Error", "Inconclusive"):
        text = f"AnalysisRun {evidence.name} ended {status.get('phase')}"
        if status.get("message"):
            text += f": {status['message']}"
        at = str(status.get("finishedAt") or "")
        lines.append(StoryLine(at, "verdict", text))
        for result in results:
            reason = f": {result['message']}" if result.get("message") else ""
            detail = f"metric {result.get('name')} {result.get('phase')}{reason}"
            lines.append(StoryLine(at, "detail", detail, depth=1))
    return lines


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _mappings(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _run_lines(evidence: RunEvidence) -> tuple[list[StoryLine], list[str]]:
    meta = _meta(evidence.run)
    step = _labels(evidence.run).get(STEP_LABEL)
    role = f"for step {step}" if step is not None else "in the background"
    started = StoryLine(
        str(meta.get("creationTimestamp") or ""),
        "run",
        f"AnalysisRun {evidence.name} started {role}",
    )
    notes: list[str] = []
    if not evidence.records:
        notes.append(
            f"AnalysisRun {evidence.name}: not in the decision journal; its measurements are "
            "those its status keeps (the last measurementRetention per metric)"
        )
        return [started, *_status_lines(evidence)], notes
    body: list[StoryLine] = []
    for record in evidence.records:
        if record.type == "measurement":
            body.extend(_measurement_lines(record))
        elif record.type == "verdict":
            body.extend(_verdict_lines(evidence.name, record))
    if evidence.dropped:
        notes.append(f"AnalysisRun {evidence.name}: {evidence.dropped} records past the bound")
    return [started, *body], notes


def event_line(event: Mapping[str, Any]) -> StoryLine:
    at = str(
        event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp") or ""
    )
    text = f"event {event.get('reason')}: {event.get('message')}"
    return StoryLine(at, "event", text, {"reason": event.get("reason"), "type": event.get("type")})


def rollout_story(
    rollout: Mapping[str, Any],
    runs: Sequence[RunEvidence],
    events: Sequence[Mapping[str, Any]] = (),
) -> Story:
    meta = _meta(rollout)
    lines: list[StoryLine] = []
    notes: list[str] = []
    for evidence in runs:
        found, said = _run_lines(evidence)
        lines.extend(found)
        notes.extend(said)
    lines.extend(event_line(e) for e in events)
    sources = ["status"]
    if any(r.records for r in runs):
        sources.append("journal")
    if events:
        sources.append("events")
    if not runs:
        notes.append("no AnalysisRun belongs to this Rollout's last update")
    return Story(
        subject=f"Rollout {meta.get('namespace', '')}/{meta.get('name', '')}",
        outcome=_outcome(rollout),
        lines=in_order(lines),
        sources=tuple(sources),
        notes=tuple(notes),
    )


def _when(at: str) -> datetime:
    """Journal times (ISO 8601 with an offset) and object times (RFC 3339, `Z`) compared as
    times; an unknown time sorts first."""
    return parse_time(at) or datetime.min.replace(tzinfo=UTC)


def in_order(lines: list[StoryLine]) -> tuple[StoryLine, ...]:
    """By time, details staying under the line they belong to (a stable sort of groups)."""
    groups: list[list[StoryLine]] = []
    for line in lines:
        if line.depth and groups:
            groups[-1].append(line)
        else:
            groups.append([line])
    groups.sort(key=lambda g: _when(g[0].at))
    return tuple(line for group in groups for line in group)
