"""Analysis conditions that pass on an empty result — decided by evaluating them.

Seed 002 §3.7: "A query that returns no series, because the label was renamed or the scrape
job is missing, must not count as success." Each condition is evaluated with the values a
provider yields when there is no data — an empty vector, nil, and NaN (a ratio of two zero
rates) — and the measurement's phase is decided by Argo Rollouts' rules:

* no condition at all: Successful;
* only a successCondition: Failed unless it is true;
* only a failureCondition: Successful unless it is true;
* both: Failed if the failure condition is true, Successful if only the success condition is,
  else Inconclusive;
* a condition that errors (index out of range, nil) or is not a boolean: Error, which
  counts towards consecutiveErrorLimit and never towards success.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator
from typing import Any

from headway.check.analysis_rules import query_of
from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.gates import metrics_of
from headway.expr import ConditionError, Program, compile_condition
from headway.model.yamlload import Document

__all__ = ["EMPTY_CASES", "PASSES_ON_EMPTY", "check_passes_on_empty", "measurement_phase"]

PASSES_ON_EMPTY = Rule(
    id="HW204",
    slug="passes-on-empty-result",
    severity=Severity.ERROR,
    title="An analysis metric that succeeds when its query returns no data",
    rationale="Seed 002 §3.7 and §5.10: a renamed label, a missing scrape job or an unreachable "
    "metrics store makes the query empty, and the analysis turns into a rubber stamp.",
    hint="Write the successCondition so that no data fails, e.g. `len(result) > 0 && "
    "all(result, {# < 0.02})`; never rely on a failureCondition alone.",
)

# What a provider hands to the conditions when there is no data.
EMPTY_CASES: tuple[tuple[str, Any], ...] = (
    ("an empty result (result = [])", []),
    ("no result (result = nil)", None),
    ("a NaN sample (result = [NaN], a ratio of two zero rates)", [math.nan]),
    ("a NaN scalar (result = NaN)", math.nan),
)


@functools.lru_cache(maxsize=4096)
def _program(condition: str) -> Program | None:
    """Compiled once per distinct text: library charts repeat the same condition everywhere."""
    try:
        return compile_condition(condition)
    except ConditionError:
        return None


def _truth(condition: str, result: Any) -> bool | None:
    """The condition's value, or None when evaluating it is an error (Argo: phase Error)."""
    program = _program(condition)
    if program is None:
        return None
    try:
        value = program.evaluate({"result": result})
    except ConditionError:
        return None
    return value if isinstance(value, bool) else None


def measurement_phase(success: str, failure: str, result: Any) -> str:
    """Argo Rollouts' phase for one measurement: Successful, Failed, Inconclusive or Error."""
    if not success and not failure:
        return "Successful"
    passed = _truth(success, result) if success else None
    failed = _truth(failure, result) if failure else None
    if (success and passed is None) or (failure and failed is None):
        return "Error"
    if not failure:
        failed = not passed
    if not success:
        passed = not failed
    if failed:
        return "Failed"
    return "Successful" if passed else "Inconclusive"


def _compiles(text: str) -> bool:
    return _program(text) is not None


def check_passes_on_empty(ctx: CheckContext) -> Iterable[Finding]:
    for kind in ("AnalysisTemplate", "ClusterAnalysisTemplate"):
        for unit, template in ctx.units_of_kind(kind):
            yield from _passing_metrics(template, app=unit.name)


def _passing_metrics(template: Document, *, app: str) -> Iterator[Finding]:
    for index, metric in metrics_of(template):
        if not query_of(metric):
            continue  # job and web metrics have no empty query result
        success = str(metric.get("successCondition") or "")
        failure = str(metric.get("failureCondition") or "")
        if not all(_compiles(c) for c in (success, failure) if c):
            continue  # a syntax error is the validator's report
        passing = _passing_cases(success, failure)
        if not passing:
            continue
        yield finding_at(
            PASSES_ON_EMPTY,
            template,
            path=("spec", "metrics", index),
            message=f"metric {metric.get('name')!r} "
            f"({_describe(success, failure)}) is Successful on {passing[0]}: when the "
            "query finds no data — a renamed label, a missing scrape job — the gate "
            "passes and the canary is promoted on no evidence",
            app=app,
        )


@functools.lru_cache(maxsize=4096)
def _passing_cases(success: str, failure: str) -> tuple[str, ...]:
    """The no-data cases on which these conditions are Successful, worked out once per pair
    of texts (a condition's value depends on its text and `result` alone)."""
    return tuple(
        label
        for label, value in EMPTY_CASES
        if measurement_phase(success, failure, value) == "Successful"
    )


def _describe(success: str, failure: str) -> str:
    parts = []
    if success:
        parts.append(f"successCondition `{success.strip()}`")
    if failure:
        parts.append(f"failureCondition `{failure.strip()}`")
    return ", ".join(parts) or "no condition at all"
