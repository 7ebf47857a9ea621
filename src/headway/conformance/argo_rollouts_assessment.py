"""Argo Rollouts' metric-assessment cases: `TestAssessMetric*` in `analysis/analysis_test.go`.

Each case is `assert.Equal(t, v1alpha1.AnalysisPhaseX, assessMetricStatus(metric, result,
terminating))`, after straight-line Go that builds a `v1alpha1.Metric` and a
`v1alpha1.MetricResult` and then changes their fields (`result.Failed = 5`,
`metric.Count = &count`). The reader replays those statements (go_source), then asks Headway's
`headway.analysis.assessment.assess_metric` — with Headway's safety rules on, as its
controller runs — for the phase. A measurement's times are not read; only whether it has
finished matters to the phase.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from headway.analysis.assessment import assess_metric
from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import DEFAULT_CONSECUTIVE_ERROR_LIMIT, MetricPolicy
from headway.analysis.results import Measurement, MetricResult
from headway.conformance.go_source import (
    Cursor,
    Opaque,
    Token,
    Unreadable,
    functions,
    parse_value,
    read_tokens,
    resolve,
)
from headway.conformance.tables import Case, TableResult
from headway.model.durations import parse_duration

__all__ = ["SUITE", "TEST_FILE", "run_assessment_tables"]

SUITE = "Argo Rollouts metric assessment (analysis)"
TEST_FILE = Path("analysis/analysis_test.go")
_PREFIX = "TestAssessMetric"
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def run_assessment_tables(argo_rollouts: Path) -> Iterator[TableResult]:
    try:
        tokens = read_tokens(argo_rollouts / TEST_FILE)
    except Unreadable as err:
        yield TableResult(SUITE, str(TEST_FILE), unreadable=(str(err),))
        return
    for name, body in functions(tokens, prefix=_PREFIX):
        replay = _Replay()
        replay.run(body)
        if replay.cases or replay.unreadable:
            yield TableResult(SUITE, name, tuple(replay.cases), tuple(replay.unreadable))


@dataclass
class _Replay:
    names: dict[str, Any] = field(default_factory=dict)
    cases: list[Case] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def run(self, body: list[Token]) -> None:
        cursor = Cursor(body)
        while cursor.position < len(body):
            start = cursor.position
            try:
                self._statement(cursor)
            except (Unreadable, ValueError, IndexError) as err:
                self.unreadable.append(str(err))
                cursor.position = max(cursor.position, start + 1)

    def _statement(self, cursor: Cursor) -> None:
        if cursor.peek() == "assert" and cursor.peek(2) == "Equal":
            self._case(cursor)
        elif cursor.peek(1) in (":=", "="):
            name = cursor.take().text
            cursor.take()
            self._bind(name, cursor)
        elif cursor.peek(1) == "." and cursor.peek(3) == "=":
            target, _, field_name, _ = (cursor.take().text for _ in range(4))
            value = self._read(cursor)
            if isinstance(self.names.get(target), dict):
                self.names[target][field_name] = value
        else:
            cursor.take()

    def _bind(self, name: str, cursor: Cursor) -> None:
        self.names[name] = self._read(cursor)

    def _read(self, cursor: Cursor) -> Any:
        start = cursor.position
        try:
            return parse_value(cursor, self.names)
        except Unreadable as err:
            cursor.position = start + 1
            return Opaque(str(err))

    def _case(self, cursor: Cursor) -> None:
        """An `assert.Equal` of `assessMetricStatus(...)`; any other assert is passed over."""
        end = _call_end(cursor.tokens, cursor.position + 3)
        if not any(t.text == "assessMetricStatus" for t in cursor.tokens[cursor.position : end]):
            cursor.position = end
            return
        for text in ("assert", ".", "Equal", "(", "t", ","):
            cursor.expect(text)
        try:
            expected = parse_value(cursor, self.names)
        except Unreadable:
            cursor.position = end
            raise
        cursor.position = next(
            i for i in range(cursor.position, end) if cursor.tokens[i].text == "assessMetricStatus"
        )
        cursor.take()
        cursor.expect("(")
        metric_name, _, result_name, _, terminating = (cursor.take().text for _ in range(5))
        cursor.expect(")")
        if not isinstance(expected, str):
            raise Unreadable(f"the expected phase is not a literal phase: {expected!r}")
        metric = resolve(self.names.get(metric_name), self.names)
        result = resolve(self.names.get(result_name), self.names)
        actual = _headway(metric, result, terminating=terminating == "true")
        name = f"terminating={terminating} {_describe(metric, result)}"
        self.cases.append(Case(name, expected, actual))


def _call_end(tokens: list[Token], open_paren: int) -> int:
    """The index just past the `)` that closes the `(` at `open_paren`."""
    depth = 0
    for index in range(open_paren, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[index].text, 0)
        if depth == 0:
            return index + 1
    raise Unreadable("unbalanced parentheses")


def _int(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Unreadable(f"not a number: {value!r}")


def _policy(metric: Mapping[str, Any]) -> MetricPolicy:
    interval = metric.get("Interval")
    if interval is not None and not isinstance(interval, str):
        raise Unreadable(f"interval {interval!r}")
    return MetricPolicy(
        name=str(metric.get("Name") or "metric"),
        count=_int(metric.get("Count"), 0),
        interval=timedelta(seconds=parse_duration(interval)) if interval else None,
        failure_limit=_int(metric.get("FailureLimit"), 0),
        inconclusive_limit=_int(metric.get("InconclusiveLimit"), 0),
        consecutive_error_limit=_int(
            metric.get("ConsecutiveErrorLimit"), DEFAULT_CONSECUTIVE_ERROR_LIMIT
        ),
        consecutive_success_limit=_int(metric.get("ConsecutiveSuccessLimit"), 0),
    )


def _measurement(entry: Any) -> Measurement:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("Phase"), str):
        raise Unreadable(f"a measurement without a literal phase: {entry!r}")
    finished = _EPOCH if entry.get("FinishedAt") is not None else None
    return Measurement(MeasurementPhase(entry["Phase"]), _EPOCH, finished)


def _result(name: str, result: Mapping[str, Any]) -> MetricResult:
    measurements = result.get("Measurements") or []
    if not isinstance(measurements, list):
        raise Unreadable("measurements that are not a literal list")
    phase = result.get("Phase")
    return MetricResult(
        name,
        tuple(_measurement(entry) for entry in measurements),
        phase=MeasurementPhase(phase) if isinstance(phase, str) else MeasurementPhase.RUNNING,
        count=_int(result.get("Count"), 0),
        successful=_int(result.get("Successful"), 0),
        failed=_int(result.get("Failed"), 0),
        inconclusive=_int(result.get("Inconclusive"), 0),
        error=_int(result.get("Error"), 0),
        consecutive_error=_int(result.get("ConsecutiveError"), 0),
        consecutive_success=_int(result.get("ConsecutiveSuccess"), 0),
    )


def _headway(metric: Any, result: Any, *, terminating: bool) -> str:
    if not isinstance(metric, Mapping) or not isinstance(result, Mapping):
        raise Unreadable("the metric or the result is not a literal")
    policy = _policy(metric)
    return str(assess_metric(policy, _result(policy.name, result), terminating=terminating).phase)


def _describe(metric: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    limits = {k: v for k, v in metric.items() if k not in ("Name",) and not isinstance(v, Opaque)}
    counters = {k: v for k, v in result.items() if isinstance(v, int)}
    phases = [m.get("Phase") for m in result.get("Measurements") or [] if isinstance(m, dict)]
    return f"metric {limits} result {counters} measurements {phases}"
