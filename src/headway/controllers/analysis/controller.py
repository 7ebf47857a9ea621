"""The analysis controller: one step over one AnalysisRun, as a step function.

    requeue_after = await controller.step(cluster, namespace, name, now)

A step reads the run, resolves its arguments (`analysis_args`), takes every measurement that
is due at `now` (`headway.analysis.schedule`), resumes or terminates measurements in flight,
records them with their retention limit (`headway.analysis.results`), assesses the run
(`headway.analysis.assessment`), stops measurements still in flight when the run ends, and
writes the status once. It returns the seconds until the next measurement is due, or None when
the run has ended (or is gone).

Everything a later step needs is in the status: measurement times, in-flight measurements
(`resumeAt`, the Job's name in `metadata`) and counters. A controller killed at any point and
started again continues from there: a measurement that was written is never taken again, one
that was not is taken once when due; a Job created before the crash is found by its
deterministic name and reused.

Secrets never reach the status or the log: argument values read from `secretKeyRef` (and
credentials in URLs) are masked in the whole status right before it is written, and in the
log line of a provider that raised (`headway.redaction`).

`spec.terminate: true` ends the run at the next step: measurements in flight are terminated
and the run is assessed as Argo does (Successful if nothing failed), with Headway's
`SafetyRules` (a metric needs its measurements to pass; only-Error is an Error).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from headway.analysis.assessment import RunAssessment, assess_run
from headway.analysis.measurement import MeasurementPhase
from headway.analysis.policy import HEADWAY_RULES, SafetyRules
from headway.analysis.results import COMPLETED, MetricResult, record_measurement, retain
from headway.analysis.schedule import measurement_due, next_run_check_at
from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.analysis.args import PreparedMetric, PreparedRun, RunProblem, prepare_run
from headway.controllers.analysis.journal import (
    record_measurement_decision,
    record_refusal,
    record_verdict,
    verdict_event,
)
from headway.controllers.analysis.measure import recorded
from headway.controllers.analysis.status import read_results, run_status
from headway.decisions import DecisionJournal, NullJournal
from headway.kubetime import format_precise_time
from headway.model.obj import Obj
from headway.providers.protocol import MeasurementRequest, RecordedMeasurement, RunRef, decided
from headway.providers.registry import ProviderRegistry, UnsupportedProvider
from headway.redaction import Redactor

__all__ = ["API_VERSION", "KIND", "AnalysisController"]

API_VERSION = "argoproj.io/v1alpha1"
KIND = "AnalysisRun"
log = logging.getLogger(__name__)


def _run_ref(obj: Obj) -> RunRef:
    meta = obj.get("metadata") or {}
    return RunRef(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace") or "default"),
        uid=str(meta.get("uid", "")),
        api_version=str(obj.get("apiVersion") or API_VERSION),
    )


class AnalysisController:
    """Executes AnalysisRuns with the providers it is given."""

    def __init__(
        self,
        *,
        providers: ProviderRegistry,
        clock: Clock,
        rules: SafetyRules = HEADWAY_RULES,
        journal: DecisionJournal | None = None,
    ) -> None:
        self._providers = providers
        self._clock = clock
        self._rules = rules
        self._journal = journal or NullJournal()

    async def step(
        self, cluster: Cluster, namespace: str, name: str, now: datetime
    ) -> float | None:
        try:
            obj = cluster.get(API_VERSION, KIND, name, namespace)
        except NotFound:
            return None
        found = obj.get("status") or {}
        status: Mapping[str, object] = found if isinstance(found, Mapping) else {}
        if status.get("phase") in {str(p) for p in COMPLETED}:
            return None
        if obj["metadata"].get("deletionTimestamp"):
            return None
        try:
            prepared = prepare_run(obj, cluster)
            for item in prepared.metrics:
                self._providers.for_metric(item.metric)
            started_at, results = read_results(status)
        except (RunProblem, UnsupportedProvider) as problem:
            self._write(cluster, obj, _error_status(str(problem), status, now), Redactor())
            record_refusal(self._journal, run=_run_ref(obj), message=str(problem), at=now)
            return None
        started_at = started_at or now
        results = await self._measure_due(
            cluster, obj, prepared, results=results, started_at=started_at, now=now
        )
        verdict = assess_run(
            prepared.policies, results, terminate=prepared.terminate, rules=self._rules
        )
        if verdict.phase in COMPLETED:
            results = await self._stop_in_flight(cluster, obj, prepared, results)
            verdict = assess_run(prepared.policies, results, terminate=True, rules=self._rules)
        results = _with_metric_phases(results, verdict)
        new_status = run_status(
            verdict=verdict, results=results, policies=prepared.policies, started_at=started_at
        )
        redactor = Redactor.of(prepared.secrets)
        self._write(cluster, obj, new_status, redactor)
        if verdict.phase in COMPLETED:
            record_verdict(
                self._journal, run=_run_ref(obj), verdict=verdict, at=now, redactor=redactor
            )
            verdict_event(cluster, self._clock, run=obj, verdict=verdict, redactor=redactor)
            return None
        due = next_run_check_at(
            prepared.policies, results, run_started_at=started_at, terminating=prepared.terminate
        )
        return None if due is None else max(0.0, (due - now).total_seconds())

    async def _measure_due(
        self,
        cluster: Cluster,
        obj: Obj,
        prepared: PreparedRun,
        *,
        results: Mapping[str, MetricResult],
        started_at: datetime,
        now: datetime,
    ) -> dict[str, MetricResult]:
        updated = dict(results)
        for item in prepared.metrics:
            name = item.policy.name
            current = updated.get(name)
            if not measurement_due(
                item.policy,
                current,
                run_started_at=started_at,
                now=now,
                terminating=prepared.terminate,
            ):
                continue
            request = _request(cluster, obj, item, current, now)
            answer = await self._take(
                item,
                request,
                current,
                terminating=prepared.terminate,
                redactor=Redactor.of(prepared.secrets),
            )
            updated[name] = await self._record(
                item, request, current or MetricResult(name), answer, secrets=prepared.secrets
            )
        return updated

    async def _take(
        self,
        item: PreparedMetric,
        request: MeasurementRequest,
        current: MetricResult | None,
        *,
        terminating: bool,
        redactor: Redactor,
    ) -> RecordedMeasurement:
        provider = self._providers.for_metric(item.metric)
        last = current.last if current is not None else None
        try:
            if isinstance(last, RecordedMeasurement) and last.finished_at is None:
                if terminating:
                    answer = await provider.terminate(request, last)
                else:
                    answer = await provider.resume(request, last)
            else:
                answer = await provider.run(request)
        except Exception as error:  # a provider bug must not wedge the run: record an Error
            log.error(  # no traceback: it would show the secrets substituted into the metric
                "provider for metric %s raised %s: %s",
                item.policy.name,
                type(error).__name__,
                redactor.text(str(error)),
            )
            answer = decided(
                request,
                MeasurementPhase.ERROR,
                f"the provider failed: {type(error).__name__}: {error}",
                finished_at=self._clock.now(),
            )
        return recorded(item.metric, item.conditions, answer)

    async def _record(
        self,
        item: PreparedMetric,
        request: MeasurementRequest,
        result: MetricResult,
        measurement: RecordedMeasurement,
        *,
        secrets: tuple[str, ...],
    ) -> MetricResult:
        updated = retain(record_measurement(result, measurement), item.policy.measurement_limit)
        record_measurement_decision(
            self._journal,
            run=request.run,
            item=item,
            measurement=measurement,
            redactor=Redactor.of(secrets),
        )
        if measurement.completed:
            try:
                provider = self._providers.for_metric(item.metric)
                await provider.garbage_collect(request, item.policy.measurement_limit)
            except ClusterError as error:
                log.warning("garbage collection for %s failed: %s", item.policy.name, error)
        return updated

    async def _stop_in_flight(
        self,
        cluster: Cluster,
        obj: Obj,
        prepared: PreparedRun,
        results: Mapping[str, MetricResult],
    ) -> dict[str, MetricResult]:
        """The run has ended: terminate measurements still in flight (a Job still running)."""
        updated = dict(results)
        now = self._clock.now()
        for item in prepared.metrics:
            current = updated.get(item.policy.name)
            last = current.last if current is not None else None
            if current is None or not isinstance(last, RecordedMeasurement):
                continue
            if last.finished_at is not None:
                continue
            request = _request(cluster, obj, item, current, now)
            provider = self._providers.for_metric(item.metric)
            answer = recorded(item.metric, item.conditions, await provider.terminate(request, last))
            updated[item.policy.name] = await self._record(
                item, request, current, answer, secrets=prepared.secrets
            )
        return updated

    def _write(self, cluster: Cluster, obj: Obj, status: Obj, redactor: Redactor) -> None:
        """Write the status with secrets masked, unless it is what is stored (no write, so no
        watch event)."""
        status = redactor.value(status)
        if status == (obj.get("status") or {}):
            return
        meta = obj["metadata"]
        cluster.patch_status(API_VERSION, KIND, meta["name"], meta.get("namespace"), status)


def _request(
    cluster: Cluster, obj: Obj, item: PreparedMetric, current: MetricResult | None, now: datetime
) -> MeasurementRequest:
    done = (current.count + current.error) if current is not None else 0
    return MeasurementRequest(
        run=_run_ref(obj), metric=item.metric, started_at=now, cluster=cluster, sequence=done + 1
    )


def _with_metric_phases(
    results: Mapping[str, MetricResult], verdict: RunAssessment
) -> dict[str, MetricResult]:
    """Each metric's assessed phase and reason onto its result (completed ones stay)."""
    updated = dict(results)
    for assessment in verdict.metrics:
        result = updated.get(assessment.name)
        if result is None or result.phase in COMPLETED:
            continue
        updated[assessment.name] = replace(
            result, phase=assessment.phase, message=assessment.reason
        )
    return updated


def _error_status(message: str, status: Mapping[str, object], now: datetime) -> Obj:
    return {
        **status,
        "phase": str(MeasurementPhase.ERROR),
        "message": message,
        "startedAt": status.get("startedAt") or format_precise_time(now),
    }
