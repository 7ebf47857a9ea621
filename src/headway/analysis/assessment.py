"""An analysis run's assessment: each metric's phase from its limits, then the run's. Pure.

This follows Argo Rollouts' `assessMetricStatus` and `assessRunStatus`:

* A metric is Failed when `failed > failureLimit` (unless failureLimit is negative),
  Inconclusive when `inconclusive > inconclusiveLimit`, Error when
  `consecutiveErrors > consecutiveErrorLimit`; if several hold, the later one in that list wins.
* Otherwise it is Successful once `consecutiveSuccessLimit` (when above 0) is reached, or once
  `count` measurements are taken (Inconclusive then if a consecutiveSuccessLimit was set but
  never reached alongside a failureLimit, Failed if only the consecutiveSuccessLimit was set).
* Otherwise it is Pending before its first measurement and Running after.
* The run's phase is the worst completed metric's, in the order Successful < Running < Pending
  < Inconclusive < Error < Failed, with dryRun metrics left out; while any metric is still
  running the run is Running, unless it is terminating (terminate was asked, or a metric that
  is not dryRun ended Failed, Error or Inconclusive), when the metrics still running count as
  Successful. Argo reaches that on the reconcile after the bad metric; here it is one call.

Headway's safety rules (`SafetyRules`, on by default) change two of those Successes; see
docs/analysis.md and docs/compatibility.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import HEADWAY_RULES, MetricPolicy, SafetyRules
from headway.analysis.results import COMPLETED, MetricResult

__all__ = [
    "MetricAssessment",
    "RunAssessment",
    "RunSummary",
    "assess_metric",
    "assess_run",
    "worse",
]

_ORDER = (
    MeasurementPhase.SUCCESSFUL,
    MeasurementPhase.RUNNING,
    MeasurementPhase.PENDING,
    MeasurementPhase.INCONCLUSIVE,
    MeasurementPhase.ERROR,
    MeasurementPhase.FAILED,
)
_BAD = frozenset({MeasurementPhase.FAILED, MeasurementPhase.ERROR, MeasurementPhase.INCONCLUSIVE})


def worse(current: MeasurementPhase, new: MeasurementPhase) -> bool:
    """Whether `new` is a worse run outcome than `current`."""
    return _ORDER.index(new) > _ORDER.index(current)


@dataclass(frozen=True)
class MetricAssessment:
    name: str
    phase: MeasurementPhase
    reason: str = ""
    dry_run: bool = False


@dataclass(frozen=True)
class RunSummary:
    """How many metrics ended in each phase (Argo's runSummary / dryRunSummary)."""

    count: int = 0
    successful: int = 0
    failed: int = 0
    inconclusive: int = 0
    error: int = 0


@dataclass(frozen=True)
class RunAssessment:
    phase: MeasurementPhase
    message: str
    metrics: tuple[MetricAssessment, ...]
    summary: RunSummary
    dry_run_summary: RunSummary


def _limit_breach(policy: MetricPolicy, result: MetricResult) -> tuple[MeasurementPhase, str]:
    """Argo's failure / inconclusive / error limits; the later check overrides the earlier."""
    phase, reason = MeasurementPhase.RUNNING, ""
    if policy.failure_limit >= 0 and result.failed > policy.failure_limit:
        phase = MeasurementPhase.FAILED
        reason = f"failed ({result.failed}) > failureLimit ({policy.failure_limit})"
    if result.inconclusive > policy.inconclusive_limit:
        phase = MeasurementPhase.INCONCLUSIVE
        reason = (
            f"inconclusive ({result.inconclusive}) > inconclusiveLimit "
            f"({policy.inconclusive_limit})"
        )
    if result.consecutive_error > policy.consecutive_error_limit:
        phase = MeasurementPhase.ERROR
        reason = (
            f"consecutiveErrors ({result.consecutive_error}) > consecutiveErrorLimit "
            f"({policy.consecutive_error_limit})"
        )
    return phase, reason


def _count_reached(policy: MetricPolicy) -> tuple[MeasurementPhase, str]:
    success_limit = policy.consecutive_success_limit
    if success_limit > 0 and policy.failure_limit >= 0:
        return MeasurementPhase.INCONCLUSIVE, (
            f"consecutiveSuccessLimit ({success_limit}) not reached and failureLimit "
            f"({policy.failure_limit}) not exceeded"
        )
    if success_limit > 0:
        return MeasurementPhase.FAILED, f"consecutiveSuccessLimit ({success_limit}) not reached"
    return MeasurementPhase.SUCCESSFUL, f"count ({policy.effective_count()}) reached"


def _terminated(
    policy: MetricPolicy, result: MetricResult, rules: SafetyRules
) -> tuple[MeasurementPhase, str]:
    """A run stopped before this metric finished: Argo calls that Successful."""
    if rules.errors_never_succeed and result.count == 0 and result.error > 0:
        return (
            MeasurementPhase.ERROR,
            f"run terminated; all {result.error} measurements were Errors",
        )
    required = policy.required_measurements()
    if rules.require_measurements and result.count < required:
        return MeasurementPhase.INCONCLUSIVE, (
            f"run terminated after {result.count} of {required} required measurements"
        )
    return MeasurementPhase.SUCCESSFUL, "run terminated"


def assess_metric(
    policy: MetricPolicy,
    result: MetricResult | None,
    *,
    terminating: bool = False,
    rules: SafetyRules = HEADWAY_RULES,
) -> MetricAssessment:
    """One metric's phase from its policy and what it has measured so far."""

    def done(phase: MeasurementPhase, reason: str = "") -> MetricAssessment:
        return MetricAssessment(policy.name, phase, reason, policy.dry_run)

    if result is not None and result.phase in COMPLETED:
        return done(result.phase, result.message)
    if result is None or result.last is None:
        if not terminating:
            return done(MeasurementPhase.PENDING)
        return done(*_terminated(policy, result or MetricResult(policy.name), rules))
    if not result.last.completed or result.last.finished_at is None:
        return done(MeasurementPhase.RUNNING)
    phase, reason = _limit_breach(policy, result)
    if phase is not MeasurementPhase.RUNNING:
        return done(phase, reason)
    success_limit = policy.consecutive_success_limit
    if success_limit > 0 and result.consecutive_success >= success_limit:
        return done(
            MeasurementPhase.SUCCESSFUL, f"consecutiveSuccessLimit ({success_limit}) reached"
        )
    count = policy.effective_count()
    if count is not None and result.count >= count:
        return done(*_count_reached(policy))
    if terminating:
        return done(*_terminated(policy, result, rules))
    return done(MeasurementPhase.RUNNING)


def _summarize(assessments: Sequence[MetricAssessment], total: int) -> RunSummary:
    ended = [a.phase for a in assessments if a.phase in COMPLETED]
    return RunSummary(
        count=total,
        successful=ended.count(MeasurementPhase.SUCCESSFUL),
        failed=ended.count(MeasurementPhase.FAILED),
        inconclusive=ended.count(MeasurementPhase.INCONCLUSIVE),
        error=ended.count(MeasurementPhase.ERROR),
    )


def _assess_all(
    policies: Sequence[MetricPolicy],
    results: Mapping[str, MetricResult],
    terminating: bool,
    rules: SafetyRules,
) -> list[MetricAssessment]:
    return [
        assess_metric(policy, results.get(policy.name), terminating=terminating, rules=rules)
        for policy in policies
    ]


def _worst(assessments: Sequence[MetricAssessment]) -> MetricAssessment | None:
    worst: MetricAssessment | None = None
    for assessment in assessments:
        if assessment.dry_run or assessment.phase not in COMPLETED:
            continue
        if worst is None or worse(worst.phase, assessment.phase):
            worst = assessment
    return worst


def _last_message(results: Mapping[str, MetricResult], name: str) -> str:
    result = results.get(name)
    last = result.last if result else None
    return last.message if last else ""


def assess_run(
    policies: Sequence[MetricPolicy],
    results: Mapping[str, MetricResult],
    *,
    terminate: bool = False,
    rules: SafetyRules = HEADWAY_RULES,
) -> RunAssessment:
    """The run's phase and message, worst metric first, dryRun metrics aside."""
    assessments = _assess_all(policies, results, terminate, rules)
    bad = any(a.phase in _BAD and not a.dry_run for a in assessments)
    terminating = terminate or bad
    if terminating and not terminate:
        assessments = _assess_all(policies, results, True, rules)
    counted = [a for a in assessments if not a.dry_run]
    dry = [a for a in assessments if a.dry_run]
    summary = _summarize(counted, len(counted))
    phase, message = _run_phase(assessments, results, terminating=terminating)
    if rules.errors_never_succeed and phase is MeasurementPhase.SUCCESSFUL:
        phase, message = _all_errors(counted, results, phase, message)
    return RunAssessment(phase, message, tuple(assessments), summary, _summarize(dry, len(dry)))


def _run_phase(
    assessments: Sequence[MetricAssessment],
    results: Mapping[str, MetricResult],
    *,
    terminating: bool,
) -> tuple[MeasurementPhase, str]:
    worst = _worst(assessments)
    everything_completed = all(a.phase in COMPLETED for a in assessments)
    if worst is None and any(a.dry_run and a.phase in COMPLETED for a in assessments):
        worst = MetricAssessment("", MeasurementPhase.SUCCESSFUL)  # Argo: dryRun-only runs pass
    if not terminating and (not everything_completed or worst is None):
        return MeasurementPhase.RUNNING, ""
    if worst is None:
        return MeasurementPhase.SUCCESSFUL, "run terminated before any metric completed"
    if not worst.name or not worst.reason:
        return worst.phase, "run terminated" if terminating else ""
    message = f'metric "{worst.name}" assessed {worst.phase}: {worst.reason}'
    last = _last_message(results, worst.name)
    return worst.phase, f"{message}; last measurement: {last}" if last else message


def _all_errors(
    counted: Sequence[MetricAssessment],
    results: Mapping[str, MetricResult],
    phase: MeasurementPhase,
    message: str,
) -> tuple[MeasurementPhase, str]:
    """Headway: a run whose measurements (dryRun aside) were all Errors is an Error."""
    tallies = [results[a.name] for a in counted if a.name in results]
    if tallies and sum(t.count for t in tallies) == 0 and sum(t.error for t in tallies) > 0:
        errors = sum(t.error for t in tallies)
        return (
            MeasurementPhase.ERROR,
            f"all {errors} measurements were Errors; nothing was measured",
        )
    return phase, message
