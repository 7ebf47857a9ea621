"""A provider's answer turned into a recorded measurement: Headway's empty-result rule, then
the metric's conditions (`headway.analysis.measurement`, the one place they are evaluated).

An empty result — no value, an empty list (a Prometheus vector with no series, no traffic), an
empty object or text — is decided by the metric's `onEmpty` (a Headway field):

| onEmpty | measurement |
|---|---|
| `Failed` (default) | Failed: "the query returned no data: QUERY" |
| `Inconclusive` | Inconclusive, same message |
| `Evaluate` | the conditions see the empty result, as in Argo Rollouts |
"""

from __future__ import annotations

from typing import Any

from headway.analysis.measurement import (
    MeasurementPhase,
    MetricConditions,
    measurement_outcome,
)
from headway.model.analysis import Metric
from headway.providers.protocol import ProviderMeasurement, RecordedMeasurement

__all__ = ["ON_EMPTY_DEFAULT", "is_empty", "recorded"]

ON_EMPTY_DEFAULT = "Failed"


def is_empty(result: Any) -> bool:
    return result is None or (isinstance(result, list | tuple | dict | str) and not result)


def _empty_outcome(metric: Metric, answer: ProviderMeasurement) -> tuple[MeasurementPhase, str]:
    mode = metric.on_empty or ON_EMPTY_DEFAULT
    phase = MeasurementPhase.INCONCLUSIVE if mode == "Inconclusive" else MeasurementPhase.FAILED
    return phase, (
        f'metric "{metric.name}": the query returned no data: {answer.query}; '
        f"onEmpty is {mode}, so the measurement is {phase} "
        "(set onEmpty: Evaluate to pass the empty result to the conditions)"
    )


def recorded(
    metric: Metric, conditions: MetricConditions, answer: ProviderMeasurement
) -> RecordedMeasurement:
    """The measurement to store; answers without a result keep the provider's phase."""
    phase, message = answer.phase, answer.message
    if answer.has_result:
        if is_empty(answer.result) and (metric.on_empty or ON_EMPTY_DEFAULT) != "Evaluate":
            phase, message = _empty_outcome(metric, answer)
        else:
            outcome = measurement_outcome(conditions, answer.result)
            phase, message = outcome.phase, outcome.message
    elif message and not message.startswith(f'metric "{metric.name}"'):
        message = f'metric "{metric.name}": {message}'
    return RecordedMeasurement(
        phase=phase,
        started_at=answer.started_at,
        finished_at=answer.finished_at,
        value=answer.value or None,
        message=message,
        resume_at=answer.resume_at,
        metadata=dict(answer.metadata),
    )
