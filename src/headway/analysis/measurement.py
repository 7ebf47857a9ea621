"""The outcome of one measurement: a metric's conditions applied to one result. Pure.

The rules are Argo Rollouts' (`utils/evaluate/evaluate.go`):

| successCondition | failureCondition | outcome                                                   |
|------------------|------------------|-----------------------------------------------------------|
| unset            | unset            | Successful                                                |
| set              | unset            | Successful when true, else Failed                         |
| unset            | set              | Failed when true, else Successful                         |
| set              | set              | Failed if failure is true, else Successful if success is  |
|                  |                  | true, else Inconclusive                                   |

A condition that cannot be compiled or evaluated, or that gives something other than a bool,
makes the measurement an Error, with the reason. The success condition is evaluated first, as
in Argo, so its error is the one reported when both are broken.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from headway.expr import (
    ConditionError,
    ConditionSyntaxError,
    Program,
    compile_condition,
    describe_value,
)

__all__ = [
    "MeasurementOutcome",
    "MeasurementPhase",
    "MetricConditions",
    "compile_metric_conditions",
    "measurement_outcome",
]


class MeasurementPhase(StrEnum):
    """The phases of a measurement, spelled as in Argo Rollouts' AnalysisPhase."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCESSFUL = "Successful"
    FAILED = "Failed"
    INCONCLUSIVE = "Inconclusive"
    ERROR = "Error"


@dataclass(frozen=True)
class MeasurementOutcome:
    phase: MeasurementPhase
    message: str


@dataclass(frozen=True)
class _Condition:
    field: str  # "successCondition" or "failureCondition"
    text: str
    program: Program | None
    syntax_error: ConditionSyntaxError | None

    def quoted(self) -> str:
        return f'{self.field} "{self.text.strip()}"'


@dataclass(frozen=True)
class MetricConditions:
    """A metric's two conditions, compiled once and reused for every measurement."""

    metric: str
    success: _Condition | None
    failure: _Condition | None


def _compile(field: str, text: str) -> _Condition | None:
    if not text:
        return None
    try:
        return _Condition(field, text, compile_condition(text), None)
    except ConditionSyntaxError as err:
        return _Condition(field, text, None, err)


def compile_metric_conditions(
    metric: str, *, success_condition: str = "", failure_condition: str = ""
) -> MetricConditions:
    """Compile both conditions; a syntax error is kept and reported by every measurement."""
    return MetricConditions(
        metric,
        _compile("successCondition", success_condition),
        _compile("failureCondition", failure_condition),
    )


class _ConditionFailed(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _no_data(result: Any) -> bool:
    return result is None or (isinstance(result, list | tuple | dict) and not result)


def _evaluate(condition: _Condition, result: Any) -> bool:
    """The condition's bool, or `_ConditionFailed` saying why there is none."""
    shown = describe_value(result)
    if condition.syntax_error is not None:
        raise _ConditionFailed(f"could not compile {condition.quoted()}: {condition.syntax_error}")
    assert condition.program is not None
    try:
        value = condition.program.evaluate({"result": result})
    except ConditionError as err:
        hint = " (the metric returned no data)" if _no_data(result) else ""
        raise _ConditionFailed(
            f"could not evaluate {condition.quoted()} for result {shown}{hint}: {err}"
        ) from None
    if type(value) is not bool:
        raise _ConditionFailed(
            f"{condition.quoted()} gave {describe_value(value)} for result {shown}, "
            "but a condition must give true or false"
        )
    return value


def measurement_outcome(conditions: MetricConditions, result: Any) -> MeasurementOutcome:
    """Apply Argo Rollouts' rules (see the module docstring) to one measured `result`."""
    prefix = f'metric "{conditions.metric}": '
    success, failure = conditions.success, conditions.failure
    try:
        success_true = _evaluate(success, result) if success else False
        failure_true = _evaluate(failure, result) if failure else False
    except _ConditionFailed as failed:
        return MeasurementOutcome(MeasurementPhase.ERROR, prefix + failed.message)
    phase, because = _decide(success, success_true, failure, failure_true)
    return MeasurementOutcome(phase, f"{prefix}{because} for result {describe_value(result)}")


def _decide(
    success: _Condition | None,
    success_true: bool,
    failure: _Condition | None,
    failure_true: bool,
) -> tuple[MeasurementPhase, str]:
    if success is None and failure is None:
        return MeasurementPhase.SUCCESSFUL, "no successCondition or failureCondition is set"
    if failure is None:
        assert success is not None
        if success_true:
            return MeasurementPhase.SUCCESSFUL, f"{success.quoted()} was true"
        return MeasurementPhase.FAILED, f"{success.quoted()} was false"
    if failure_true:
        return MeasurementPhase.FAILED, f"{failure.quoted()} was true"
    if success is None:
        return MeasurementPhase.SUCCESSFUL, f"{failure.quoted()} was false"
    if success_true:
        return MeasurementPhase.SUCCESSFUL, f"{success.quoted()} was true"
    return (
        MeasurementPhase.INCONCLUSIVE,
        f"neither {success.quoted()} nor {failure.quoted()} was true",
    )
