"""Headway's verdict on one measured result: the empty-result rule, then the conditions. Pure.

Argo Rollouts hands every result to the metric's conditions (`measurement_outcome`). Headway
first looks at whether the query returned anything. An empty result — no value, an empty list
(a Prometheus vector with no series, no traffic), an empty object or text — is decided by the
metric's `onEmpty` (a Headway field):

| onEmpty | measurement |
|---|---|
| `Failed` (default) | Failed: "the query returned no data: QUERY" |
| `Inconclusive` | Inconclusive, same message |
| `Evaluate` | the conditions see the empty result, as in Argo Rollouts |

The analysis controller and `headway analysis evaluate` both call `headway_outcome`, so what
the command prints is what a run would record.
"""

from __future__ import annotations

from typing import Any

from headway.analysis.measurement import (
    MeasurementOutcome,
    MeasurementPhase,
    MetricConditions,
    measurement_outcome,
)

__all__ = ["ON_EMPTY_DEFAULT", "ON_EMPTY_MODES", "headway_outcome", "is_empty"]

ON_EMPTY_DEFAULT = "Failed"
ON_EMPTY_MODES = ("Failed", "Inconclusive", "Evaluate")


def is_empty(result: Any) -> bool:
    """No data: nil, or an empty list, object or text."""
    return result is None or (isinstance(result, list | tuple | dict | str) and not result)


def headway_outcome(
    conditions: MetricConditions, result: Any, *, on_empty: str | None, query: str
) -> MeasurementOutcome:
    """The measurement Headway records for `result` (see the module docstring)."""
    mode = on_empty or ON_EMPTY_DEFAULT
    if not is_empty(result) or mode == "Evaluate":
        return measurement_outcome(conditions, result)
    phase = MeasurementPhase.INCONCLUSIVE if mode == "Inconclusive" else MeasurementPhase.FAILED
    return MeasurementOutcome(
        phase,
        f'metric "{conditions.metric}": the query returned no data: {query or "(no query)"}; '
        f"onEmpty is {mode}, so the measurement is {phase} "
        "(set onEmpty: Evaluate to pass the empty result to the conditions)",
    )
