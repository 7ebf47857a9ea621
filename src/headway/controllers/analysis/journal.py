"""What the analysis controller writes to the decision journal (`headway.decisions`).

A `measurement` record per completed measurement: the metric, its phase, the value as
measured, the provider's metadata (the query as it ran: `ResolvedPrometheusQuery`, a web
URL, the judge's statistic and bounds), the message, and what it was judged by (the
conditions, the limits, the count and interval). A `verdict` record when the run ends: its
phase and message, and each metric's phase and reason. Secret values are masked by the
`Redactor` the status write uses, before anything is kept.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from headway.analysis.assessment import RunAssessment
from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.events import EventType, record_event
from headway.cluster.protocol import Cluster
from headway.controllers.analysis.args import PreparedMetric
from headway.decisions import DecisionJournal, Subject
from headway.model.obj import Obj
from headway.providers.protocol import RecordedMeasurement, RunRef
from headway.redaction import Redactor, redact_url_credentials

__all__ = ["record_measurement_decision", "record_refusal", "record_verdict", "verdict_event"]

log = logging.getLogger(__name__)


def _subject(run: RunRef) -> Subject:
    return Subject("AnalysisRun", run.namespace, run.name)


def _operation(run: RunRef) -> str:
    return run.uid or run.name


def _judged_by(item: PreparedMetric) -> dict[str, Any]:
    metric, policy = item.metric, item.policy
    return {
        "successCondition": metric.success_condition or "",
        "failureCondition": metric.failure_condition or "",
        "failureLimit": policy.failure_limit,
        "inconclusiveLimit": policy.inconclusive_limit,
        "consecutiveErrorLimit": policy.consecutive_error_limit,
        "count": policy.count,
        "interval": policy.interval.total_seconds() if policy.interval else None,
        "dryRun": policy.dry_run,
    }


def record_measurement_decision(
    journal: DecisionJournal,
    *,
    run: RunRef,
    item: PreparedMetric,
    measurement: RecordedMeasurement,
    redactor: Redactor,
) -> None:
    if not measurement.completed:
        return
    data = {
        "metric": item.policy.name,
        "phase": str(measurement.phase),
        "value": measurement.value,
        "message": measurement.message,
        "metadata": dict(measurement.metadata),
        "startedAt": measurement.started_at.isoformat(),
        "judgedBy": _judged_by(item),
    }
    at = measurement.finished_at or measurement.started_at
    journal.record(
        _subject(run),
        operation=_operation(run),
        at=at,
        type="measurement",
        data=redactor.value(data),
    )


def record_verdict(
    journal: DecisionJournal,
    *,
    run: RunRef,
    verdict: RunAssessment,
    at: datetime,
    redactor: Redactor,
) -> None:
    data = {
        "phase": str(verdict.phase),
        "message": verdict.message,
        "metrics": [
            {"metric": m.name, "phase": str(m.phase), "reason": m.reason, "dryRun": m.dry_run}
            for m in verdict.metrics
        ],
    }
    journal.record(
        _subject(run), operation=_operation(run), at=at, type="verdict", data=redactor.value(data)
    )


def record_refusal(journal: DecisionJournal, *, run: RunRef, message: str, at: datetime) -> None:
    """A run that could not start (a malformed spec or status, an unsupported provider) ends in
    Error without a measurement: its verdict is the reason."""
    data = {"phase": "Error", "message": redact_url_credentials(message), "metrics": []}
    journal.record(_subject(run), operation=_operation(run), at=at, type="verdict", data=data)


def verdict_event(
    cluster: Cluster, clock: Clock, *, run: Obj, verdict: RunAssessment, redactor: Redactor
) -> None:
    """The verdict as an Event on the run (`AnalysisRunFailed: metric "error-rate" ...`), so
    `describe analysisrun` and an event watcher see the reason without the journal."""
    phase = str(verdict.phase)
    kind: EventType = "Normal" if phase == "Successful" else "Warning"
    try:
        record_event(
            cluster,
            clock,
            involved=run,
            reason=f"AnalysisRun{phase}",
            message=redactor.text(verdict.message or f"the run ended {phase}"),
            event_type=kind,
            component="headway-analysis-controller",
        )
    except ClusterError as error:
        log.warning("could not record the verdict event: %s", error)
