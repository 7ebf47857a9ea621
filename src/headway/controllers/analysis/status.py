"""An AnalysisRun's `status`, read into the analysis core's results and written back.

The shape is Argo Rollouts': `phase`, `message`, `startedAt`, `metricResults[]` (name, phase,
message, dryRun, counters and `measurements[]` with phase, value as text, startedAt,
finishedAt, resumeAt, message, metadata), `runSummary` and `dryRunSummary`. Times are RFC 3339
in UTC (headway.kubetime); fractions of a second are kept, so a restarted controller schedules
exactly as before and an `initialDelay` is never cut short by a truncated start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from headway.analysis.assessment import RunAssessment, RunSummary
from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import MetricPolicy
from headway.analysis.results import MetricResult
from headway.controllers.analysis.args import RunProblem
from headway.kubetime import format_precise_time, parse_time
from headway.providers.protocol import RecordedMeasurement

__all__ = ["read_results", "run_status"]

_COUNTERS = (
    ("count", "count"),
    ("successful", "successful"),
    ("failed", "failed"),
    ("inconclusive", "inconclusive"),
    ("error", "error"),
    ("consecutiveError", "consecutive_error"),
    ("consecutiveSuccess", "consecutive_success"),
)


def _phase(text: Any, default: MeasurementPhase) -> MeasurementPhase:
    try:
        return MeasurementPhase(str(text))
    except ValueError:
        return default


def _read_measurement(raw: Mapping[str, Any]) -> RecordedMeasurement | None:
    started = parse_time(raw.get("startedAt"))
    if started is None:
        return None
    metadata = raw.get("metadata")
    return RecordedMeasurement(
        phase=_phase(raw.get("phase"), MeasurementPhase.ERROR),
        started_at=started,
        finished_at=parse_time(raw.get("finishedAt")),
        value=raw.get("value"),
        message=str(raw.get("message") or ""),
        resume_at=parse_time(raw.get("resumeAt")),
        metadata={str(k): str(v) for k, v in metadata.items()}
        if isinstance(metadata, Mapping)
        else {},
    )


def _read_result(raw: Mapping[str, Any], where: str) -> MetricResult:
    listed = raw.get("measurements") or []
    if not isinstance(listed, list) or not all(isinstance(m, Mapping) for m in listed):
        raise RunProblem(f"{where}.measurements: expected a list of mappings, found {listed!r}")
    measurements = [_read_measurement(m) for m in listed]
    counters = {attr: _counter(raw.get(key), f"{where}.{key}") for key, attr in _COUNTERS}
    return MetricResult(
        name=str(raw.get("name", "")),
        measurements=tuple(m for m in measurements if m is not None),
        phase=_phase(raw.get("phase"), MeasurementPhase.RUNNING),
        message=str(raw.get("message") or ""),
        **counters,
    )


def read_results(status: Mapping[str, Any]) -> tuple[datetime | None, dict[str, MetricResult]]:
    """When the run started (None: not yet) and each metric's results so far. A status of
    another shape (written through the API) raises `RunProblem` naming the field: the run
    ends in Error rather than measuring on garbage."""
    results = {}
    listed = status.get("metricResults") or []
    if not isinstance(listed, list):
        raise RunProblem(f"status.metricResults: expected a list, found {listed!r}")
    for index, raw in enumerate(listed):
        if isinstance(raw, Mapping) and raw.get("name"):
            result = _read_result(raw, f"status.metricResults[{index}]")
            results[result.name] = result
    return parse_time(status.get("startedAt")), results


def _counter(value: object, where: str) -> int:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return int(value or 0)
    raise RunProblem(f"{where}: expected an integer, found {value!r}")


def _measurement_status(measurement: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "phase": str(measurement.phase),
        "startedAt": format_precise_time(measurement.started_at),
    }
    if measurement.finished_at is not None:
        out["finishedAt"] = format_precise_time(measurement.finished_at)
    if measurement.resume_at is not None and measurement.finished_at is None:
        out["resumeAt"] = format_precise_time(measurement.resume_at)
    if measurement.value not in (None, ""):
        out["value"] = str(measurement.value)
    if measurement.message:
        out["message"] = measurement.message
    metadata = getattr(measurement, "metadata", None)
    if metadata:
        out["metadata"] = dict(metadata)
    return out


def _result_status(result: MetricResult, dry_run: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": result.name, "phase": str(result.phase)}
    out["measurements"] = [_measurement_status(m) for m in result.measurements]
    for key, attr in _COUNTERS:
        out[key] = getattr(result, attr)
    if result.message:
        out["message"] = result.message
    if dry_run:
        out["dryRun"] = True
    return out


def _summary(summary: RunSummary) -> dict[str, int]:
    return {
        "count": summary.count,
        "successful": summary.successful,
        "failed": summary.failed,
        "inconclusive": summary.inconclusive,
        "error": summary.error,
    }


def run_status(
    *,
    verdict: RunAssessment,
    results: Mapping[str, MetricResult],
    policies: Sequence[MetricPolicy],
    started_at: datetime,
) -> dict[str, Any]:
    """The whole status, in the metrics' declared order."""
    status: dict[str, Any] = {
        "phase": str(verdict.phase),
        "startedAt": format_precise_time(started_at),
        "metricResults": [
            _result_status(results[p.name], p.dry_run) for p in policies if p.name in results
        ],
        "runSummary": _summary(verdict.summary),
    }
    if verdict.message:
        status["message"] = verdict.message
    if verdict.dry_run_summary.count:
        status["dryRunSummary"] = _summary(verdict.dry_run_summary)
    return status
