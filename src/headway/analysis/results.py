"""A metric's measurement history and counters (Argo's MetricResult), updated purely.

Counters survive measurementRetention: trimming old measurements never changes `count`,
`failed`, `consecutive_error` and the rest, exactly as in Argo Rollouts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from headway.analysis.measurement import MeasurementPhase

__all__ = ["COMPLETED", "Measurement", "MetricResult", "record_measurement", "retain"]

COMPLETED = frozenset(
    {
        MeasurementPhase.SUCCESSFUL,
        MeasurementPhase.FAILED,
        MeasurementPhase.INCONCLUSIVE,
        MeasurementPhase.ERROR,
    }
)


@dataclass(frozen=True)
class Measurement:
    """One measurement; `finished_at` is None while it is in flight (a job still running)."""

    phase: MeasurementPhase
    started_at: datetime
    finished_at: datetime | None = None
    value: Any = None
    message: str = ""
    resume_at: datetime | None = None

    @property
    def completed(self) -> bool:
        return self.phase in COMPLETED


@dataclass(frozen=True)
class MetricResult:
    """What has been measured for one metric so far."""

    name: str
    measurements: tuple[Measurement, ...] = ()
    phase: MeasurementPhase = MeasurementPhase.RUNNING
    message: str = ""
    count: int = 0
    """Completed measurements that were not Errors."""
    successful: int = 0
    failed: int = 0
    inconclusive: int = 0
    error: int = 0
    consecutive_error: int = 0
    consecutive_success: int = 0

    @property
    def last(self) -> Measurement | None:
        return self.measurements[-1] if self.measurements else None


def _counted(result: MetricResult, phase: MeasurementPhase) -> MetricResult:
    """Argo's counter rules: an Error breaks both streaks' meaning differently."""
    if phase is MeasurementPhase.ERROR:
        return replace(
            result,
            error=result.error + 1,
            consecutive_error=result.consecutive_error + 1,
            consecutive_success=0,
        )
    success = phase is MeasurementPhase.SUCCESSFUL
    return replace(
        result,
        count=result.count + 1,
        successful=result.successful + success,
        failed=result.failed + (phase is MeasurementPhase.FAILED),
        inconclusive=result.inconclusive + (phase is MeasurementPhase.INCONCLUSIVE),
        consecutive_error=0,
        consecutive_success=result.consecutive_success + 1 if success else 0,
    )


def record_measurement(result: MetricResult, measurement: Measurement) -> MetricResult:
    """Add a new measurement, or replace the in-flight last one; count it once it completes."""
    last = result.last
    resumes = last is not None and last.finished_at is None and not last.completed
    kept = result.measurements[:-1] if resumes else result.measurements
    updated = replace(result, measurements=(*kept, measurement))
    if measurement.completed:
        updated = _counted(updated, measurement.phase)
    return updated


def retain(result: MetricResult, limit: int) -> MetricResult:
    """Keep only the newest `limit` measurements (measurementRetention), counters untouched."""
    if limit <= 0 or len(result.measurements) <= limit:
        return result
    return replace(result, measurements=result.measurements[-limit:])
