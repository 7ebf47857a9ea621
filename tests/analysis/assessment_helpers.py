"""Build metric results from a string of phases, on a virtual timeline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from headway.analysis.measurement import MeasurementPhase
from headway.analysis.results import Measurement, MetricResult, record_measurement

START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)

PHASES = {
    "S": MeasurementPhase.SUCCESSFUL,
    "F": MeasurementPhase.FAILED,
    "I": MeasurementPhase.INCONCLUSIVE,
    "E": MeasurementPhase.ERROR,
    "R": MeasurementPhase.RUNNING,
}


def history(name: str, phases: str, *, every: timedelta = timedelta(seconds=30)) -> MetricResult:
    """`history("m", "SSF")`: three measurements, one every 30 s from START, each taking 1 s.

    `R` is an in-flight measurement (no finishedAt), only meaningful last.
    """
    result = MetricResult(name)
    for position, letter in enumerate(phases):
        started = START + every * position
        phase = PHASES[letter]
        finished = None if phase is MeasurementPhase.RUNNING else started + timedelta(seconds=1)
        result = record_measurement(
            result, Measurement(phase, started, finished, message=f"measurement {position}")
        )
    return result
