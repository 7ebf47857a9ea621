"""A provider's answer turned into a recorded measurement.

What a result decides is `headway.analysis.verdict.headway_outcome` (Headway's empty-result
and non-finite rules, then the metric's conditions): the one place it is decided, shared with
`headway analysis evaluate`.
"""

from __future__ import annotations

from headway.analysis.measurement import MetricConditions
from headway.analysis.verdict import headway_outcome
from headway.model.analysis import Metric
from headway.providers.protocol import ProviderMeasurement, RecordedMeasurement

__all__ = ["recorded"]


def recorded(
    metric: Metric, conditions: MetricConditions, answer: ProviderMeasurement
) -> RecordedMeasurement:
    """The measurement to store; answers without a result keep the provider's phase."""
    phase, message = answer.phase, answer.message
    if answer.has_result:
        outcome = headway_outcome(
            conditions,
            answer.result,
            on_empty=metric.on_empty,
            query=answer.query,
            on_non_finite=metric.on_non_finite,
        )
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
