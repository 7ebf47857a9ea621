"""What the Rollouts pages show, from the `RolloutSummary` that `headway rollouts get` reads.
Purely computational.

Each AnalysisRun metric becomes a chart: its measurements over time (the value the provider
returned, coloured by the phase it was judged), the success and failure thresholds when the
condition compares `result` with a number, and markers where the run ended and where the
Rollout aborted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from headway.kubetime import parse_time
from headway.model.obj import Obj
from headway.redaction import redact_url_credentials
from headway.rollout.replica_sets import HASH_LABEL, view_of
from headway.steering.rollout_summary import ExperimentView, RolloutSummary, weight_line

__all__ = [
    "MetricChart",
    "RolloutPage",
    "RolloutRow",
    "measured_value",
    "rollout_page",
    "rollout_row",
    "threshold",
]

# `result < 0.05`, `result[0] >= 0.95`, `0.95 <= result[0]`: a bound a chart can draw.
_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_RESULT = r"result(?:\[0\])?"
_RESULT_FIRST = re.compile(rf"^\s*{_RESULT}\s*(<=|>=|<|>|==)\s*{_NUMBER}\s*$")
_NUMBER_FIRST = re.compile(rf"^\s*{_NUMBER}\s*(<=|>=|<|>|==)\s*{_RESULT}\s*$")


def threshold(condition: str) -> float | None:
    """The number a condition compares the result with, when it is one simple comparison
    (anything else, `len(result) > 0 && ...`, draws no line)."""
    found = _RESULT_FIRST.match(condition) or _NUMBER_FIRST.match(condition)
    if found is None:
        return None
    number = found.group(2) if found.re is _RESULT_FIRST else found.group(1)
    return float(number)


def measured_value(value: Any) -> float | None:
    """A measurement's value as a number: `0.05`, `[0.05]` (Prometheus vectors), or None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if isinstance(parsed, list) and parsed:
        parsed = parsed[0]
    if isinstance(parsed, int | float) and not isinstance(parsed, bool):
        return float(parsed)
    return None


def _items(value: object) -> list[Mapping[str, Any]]:
    """The mappings of a list field; a malformed field (a number, a string) has none."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _epoch(text: Any) -> float | None:
    moment = parse_time(text)
    return moment.timestamp() if moment else None


@dataclass(frozen=True)
class MetricChart:
    name: str
    phase: str
    success: str
    failure: str
    last: str  # the last measurement: value (phase), or its message
    points: int
    data: str  # JSON for the chart script (see static/dashboard.js)


def _chart(
    metric: Mapping[str, Any], result: Mapping[str, Any], ends: Mapping[str, float | None]
) -> MetricChart:
    measurements = _items(result.get("measurements"))
    points = []
    for m in measurements:
        at = _epoch(m.get("finishedAt") or m.get("startedAt"))
        if at is not None:
            points.append([at, measured_value(m.get("value")), str(m.get("phase") or "")])
    success, failure = str(metric.get("successCondition") or ""), str(
        metric.get("failureCondition") or ""
    )
    last = measurements[-1] if measurements else {}
    shown = last.get("value", last.get("message", "-"))
    data = {
        "points": points,
        "success": threshold(success) if success else None,
        "failure": threshold(failure) if failure else None,
        "markers": [{"at": at, "label": label} for label, at in ends.items() if at is not None],
    }
    return MetricChart(
        name=str(result.get("name") or metric.get("name")),
        phase=str(result.get("phase") or "Pending"),
        success=success,
        failure=failure,
        last=redact_url_credentials(f"{shown} ({last.get('phase', result.get('phase'))})")
        if last else "",
        points=len(points),
        data=json.dumps(data),
    )


@dataclass(frozen=True)
class RunCard:
    name: str
    phase: str
    message: str
    revision_hash: str
    metrics: tuple[MetricChart, ...]


def _ended_at(status: Mapping[str, Any]) -> float | None:
    """When a finished run ended: `completedAt` where the writer records it (Argo does),
    else its last measurement's end (the one that decided it)."""
    ends = [
        _epoch(m.get("finishedAt"))
        for r in _items(status.get("metricResults"))
        for m in _items(r.get("measurements"))
    ]
    known = [e for e in ends if e is not None]
    return _epoch(status.get("completedAt")) or (max(known) if known else None)


def run_card(run: Obj, aborted_at: float | None) -> RunCard:
    status = _mapping(run.get("status"))
    specs = {str(m.get("name")): m for m in _items(_mapping(run.get("spec")).get("metrics"))}
    phase = str(status.get("phase") or "Pending")
    ended = _ended_at(status) if phase not in ("Pending", "Running") else None
    # A Failed or Errored run aborts its Rollout (Argo's rule): say so where it happened.
    label = f"run {phase}" + (": rollout aborts" if phase in ("Failed", "Error") else "")
    ends = {label: ended, "rollout aborted": aborted_at}
    results = _items(status.get("metricResults"))
    charts = [_chart(specs.get(str(r.get("name")), {}), r, ends) for r in results]
    return RunCard(
        name=str(run["metadata"]["name"]),
        phase=phase,
        message=redact_url_credentials(str(status.get("message") or "")),
        revision_hash=str(_mapping(run["metadata"].get("labels")).get(HASH_LABEL, "")),
        metrics=tuple(charts),
    )


@dataclass(frozen=True)
class StepRow:
    index: int
    label: str
    state: str  # done, current, pending


@dataclass(frozen=True)
class PodRow:
    name: str
    phase: str
    ready: bool


@dataclass(frozen=True)
class SetRow:
    name: str
    revision: int
    pod_hash: str
    available: int
    replicas: int
    roles: str
    pods: tuple[PodRow, ...]


@dataclass(frozen=True)
class RolloutRow:
    namespace: str
    name: str
    strategy: str
    phase: str
    step: str
    replicas: str


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def rollout_row(ro: Obj) -> RolloutRow:
    spec, status = _mapping(ro.get("spec")), _mapping(ro.get("status"))
    strategy = _mapping(spec.get("strategy"))
    steps = _mapping(strategy.get("canary")).get("steps")
    steps = steps if isinstance(steps, list) else []
    return RolloutRow(
        namespace=str(ro["metadata"].get("namespace") or "default"),
        name=str(ro["metadata"]["name"]),
        strategy="BlueGreen" if strategy.get("blueGreen") else "Canary",
        phase=str(status.get("phase") or "Unknown"),
        step=f"{status.get('currentStepIndex', 0)}/{len(steps)}" if steps else "-",
        replicas=f"{status.get('availableReplicas', 0)}/{spec.get('replicas', 1)} available",
    )


@dataclass(frozen=True)
class RolloutPage:
    row: RolloutRow
    message: str
    problem: str  # why the controller does not run it, when it does not
    pauses: tuple[str, ...]
    aborted: bool
    weight: str
    canary_hash: str
    stable_hash: str
    active: str  # blue-green: the active Service's selector hash
    preview: str  # blue-green: the preview Service's selector hash
    steps: tuple[StepRow, ...]
    sets: tuple[SetRow, ...]
    runs: tuple[RunCard, ...]
    experiment: ExperimentView | None = None


def _steps(summary: RolloutSummary) -> tuple[StepRow, ...]:
    from headway.rollout.canary_steps import step_label

    ro = summary.rollout
    if ro is None or ro.spec.strategy.canary is None:
        return ()
    index = int(summary.status.get("currentStepIndex") or 0)
    states = ("done", "current", "pending")
    return tuple(
        StepRow(i, step_label(step), states[(i >= index) + (i > index)])
        for i, step in enumerate(ro.spec.strategy.canary.steps)
    )


def _sets(summary: RolloutSummary) -> tuple[SetRow, ...]:
    status = summary.status
    rows = []
    for rs in summary.replica_sets:
        view = view_of(rs)
        roles = [r for r, h in (("stable", status.get("stableRS")),
                                ("canary", status.get("currentPodHash"))) if h == view.pod_hash]
        if status.get("stableRS") == status.get("currentPodHash") and roles:
            roles = ["stable"]
        pods = tuple(
            PodRow(
                name=str(p["metadata"]["name"]),
                phase=str(_mapping(p.get("status")).get("phase") or "Pending"),
                ready=any(c.get("type") == "Ready" and c.get("status") == "True"
                          for c in _items(_mapping(p.get("status")).get("conditions"))),
            )
            for p in summary.pods.get(view.name, ())
        )
        rows.append(SetRow(view.name, view.revision, view.pod_hash, view.available,
                           view.replicas, " ".join(roles), pods))
    return tuple(rows)


def rollout_page(summary: RolloutSummary, problem: str = "") -> RolloutPage:
    status = summary.status
    aborted_at = _epoch(status.get("abortedAt"))
    pauses = tuple(
        str(p.get("reason", "?")) + (f" since {p['startTime']}" if p.get("startTime") else "")
        for p in _items(status.get("pauseConditions"))
    )
    return RolloutPage(
        row=rollout_row(summary.obj),
        message=redact_url_credentials(str(status.get("message") or "")),
        problem=problem,
        pauses=pauses,
        aborted=bool(status.get("abort")),
        weight=weight_line(summary),
        canary_hash=str(status.get("currentPodHash") or ""),
        stable_hash=str(status.get("stableRS") or ""),
        active=str(_mapping(status.get("blueGreen")).get("activeSelector") or ""),
        preview=str(_mapping(status.get("blueGreen")).get("previewSelector") or ""),
        steps=_steps(summary),
        sets=_sets(summary),
        runs=tuple(run_card(r, aborted_at) for r in reversed(summary.runs)),
        experiment=_redacted_experiment(summary.experiment),
    )


def _redacted_experiment(exp: ExperimentView | None) -> ExperimentView | None:
    if exp is None:
        return None
    runs = tuple(replace(r, message=redact_url_credentials(r.message)) for r in exp.runs)
    return replace(exp, message=redact_url_credentials(exp.message), runs=runs)


def rows(rollouts: Sequence[Obj]) -> list[RolloutRow]:
    return sorted((rollout_row(r) for r in rollouts), key=lambda r: (r.namespace, r.name))
