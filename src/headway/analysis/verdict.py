"""Headway's verdict on one measured result: the empty-result rule, the non-finite rule, then
the conditions. Pure.

Argo Rollouts hands every result to the metric's conditions (`measurement_outcome`). Headway
first looks at whether the query returned anything. An empty result — no value, an empty list
(a Prometheus vector with no series, no traffic), an empty object or text — is decided by the
metric's `onEmpty` (a Headway field):

| onEmpty | measurement |
|---|---|
| `Failed` (default) | Failed: "the query returned no data: QUERY" |
| `Inconclusive` | Inconclusive, same message |
| `Evaluate` | the conditions see the empty result, as in Argo Rollouts |

A result holding a number that is not finite — NaN (a Prometheus `0/0`: no requests in the
window), `+Inf` or `-Inf`, alone, in a vector, nested in a web answer, or as text such as
`"NaN"` — is no evidence either: `NaN > 0.05` is false, so a lone `failureCondition` would
pass it. It is decided by the metric's `onNonFinite` (a Headway field):

| onNonFinite | measurement |
|---|---|
| `Error` (default) | Error: measured again; `consecutiveErrorLimit` in a row end the metric |
| `Failed` | Failed |
| `Inconclusive` | Inconclusive |
| `Evaluate` | the conditions see the value, as in Argo Rollouts |

The analysis controller and `headway analysis evaluate` both call `headway_outcome`, so what
the command prints is what a run would record.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from headway.analysis.measurement import (
    MeasurementOutcome,
    MeasurementPhase,
    MetricConditions,
    measurement_outcome,
)

__all__ = [
    "ON_EMPTY_DEFAULT",
    "ON_EMPTY_MODES",
    "ON_NON_FINITE_DEFAULT",
    "ON_NON_FINITE_MODES",
    "headway_outcome",
    "is_empty",
    "non_finite_numbers",
]

ON_EMPTY_DEFAULT = "Failed"
ON_EMPTY_MODES = ("Failed", "Inconclusive", "Evaluate")
ON_NON_FINITE_DEFAULT = "Error"
ON_NON_FINITE_MODES = ("Error", "Failed", "Inconclusive", "Evaluate")
_NON_FINITE_TEXTS = {
    "nan",
    "+nan",
    "-nan",
    "inf",
    "+inf",
    "-inf",
    "infinity",
    "+infinity",
    "-infinity",
}


def is_empty(result: Any) -> bool:
    """No data: nil, or an empty list, object or text."""
    return result is None or (isinstance(result, list | tuple | dict | str) and not result)


def _numbers_in(result: Any) -> Iterator[str]:
    """The text of each non-finite number in `result`, depth first."""
    if isinstance(result, float) and not math.isfinite(result):
        yield "NaN" if math.isnan(result) else ("+Inf" if result > 0 else "-Inf")
    elif isinstance(result, str) and result.strip().lower() in _NON_FINITE_TEXTS:
        yield result.strip()
    elif isinstance(result, list | tuple):
        for item in result:
            yield from _numbers_in(item)
    elif isinstance(result, dict):
        for item in result.values():
            yield from _numbers_in(item)


def non_finite_numbers(result: Any) -> list[str]:
    """NaN and infinities in a result (as numbers, or as text a condition could read as one)."""
    return list(_numbers_in(result))


def _non_finite_outcome(
    conditions: MetricConditions, found: list[str], *, mode: str, query: str
) -> MeasurementOutcome:
    phase = MeasurementPhase(mode)
    shown = ", ".join(dict.fromkeys(found))
    return MeasurementOutcome(
        phase,
        f'metric "{conditions.metric}": the measured value is not a finite number ({shown}) '
        f"for {query or '(no query)'}; NaN (0/0, e.g. no requests) and infinities are no "
        f"evidence; onNonFinite is {mode}, so the measurement is {phase} "
        "(set onNonFinite: Evaluate to pass the value to the conditions)",
    )


def headway_outcome(
    conditions: MetricConditions,
    result: Any,
    *,
    on_empty: str | None,
    query: str,
    on_non_finite: str | None = None,
) -> MeasurementOutcome:
    """The measurement Headway records for `result` (see the module docstring)."""
    mode = on_empty or ON_EMPTY_DEFAULT
    if not is_empty(result) or mode == "Evaluate":
        non_finite_mode = on_non_finite or ON_NON_FINITE_DEFAULT
        found = non_finite_numbers(result)
        if found and non_finite_mode != "Evaluate":
            return _non_finite_outcome(conditions, found, mode=non_finite_mode, query=query)
        return measurement_outcome(conditions, result)
    phase = MeasurementPhase.INCONCLUSIVE if mode == "Inconclusive" else MeasurementPhase.FAILED
    return MeasurementOutcome(
        phase,
        f'metric "{conditions.metric}": the query returned no data: {query or "(no query)"}; '
        f"onEmpty is {mode}, so the measurement is {phase} "
        "(set onEmpty: Evaluate to pass the empty result to the conditions)",
    )
