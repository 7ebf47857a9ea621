"""When a metric's next measurement is due, on whatever clock the caller reads. Pure.

Argo Rollouts' rules (`generateMetricTasks`, `calculateNextReconcileTime`): the first
measurement is due when the run starts, or `initialDelay` later; an in-flight measurement is
due again at its `resumeAt` (or at once); after an Error the next one is due 10 s later; after
any other phase, `interval` later; none once `count` measurements are taken, the metric has
completed, or the run is terminating. A measurement is due when the clock reaches that time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import ERROR_RETRY_INTERVAL, MetricPolicy
from headway.analysis.results import COMPLETED, MetricResult

__all__ = ["measurement_due", "next_measurement_at", "next_run_check_at"]


def next_measurement_at(
    policy: MetricPolicy,
    result: MetricResult | None,
    *,
    run_started_at: datetime,
    terminating: bool = False,
) -> datetime | None:
    """When the next measurement of this metric is due, or None if no more are."""
    if result is not None and result.phase in COMPLETED:
        return None
    last = result.last if result is not None else None
    if last is None:
        if terminating:
            return None
        return run_started_at + policy.initial_delay if policy.initial_delay else run_started_at
    if last.finished_at is None:
        return last.resume_at or last.started_at  # resume (or terminate) the in-flight one
    count = policy.effective_count()
    if terminating or (result is not None and count is not None and result.count >= count):
        return None
    if last.phase is MeasurementPhase.ERROR or policy.interval is None:
        return last.finished_at + ERROR_RETRY_INTERVAL
    return last.finished_at + policy.interval


def measurement_due(
    policy: MetricPolicy,
    result: MetricResult | None,
    *,
    run_started_at: datetime,
    now: datetime,
    terminating: bool = False,
) -> bool:
    due = next_measurement_at(
        policy, result, run_started_at=run_started_at, terminating=terminating
    )
    return due is not None and now >= due


def next_run_check_at(
    policies: Sequence[MetricPolicy],
    results: Mapping[str, MetricResult],
    *,
    run_started_at: datetime,
    terminating: bool = False,
) -> datetime | None:
    """The earliest time any metric of the run needs attention: when to requeue the run."""
    times = [
        next_measurement_at(
            policy, results.get(policy.name), run_started_at=run_started_at, terminating=terminating
        )
        for policy in policies
    ]
    pending = [t for t in times if t is not None]
    return min(pending) if pending else None
