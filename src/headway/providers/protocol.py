"""What every metric provider offers, and what one measurement by a provider looks like.

A provider takes one measurement of one metric whose `{{args.x}}` placeholders are already
resolved. It never raises for a measurement that went wrong: it answers with a
`ProviderMeasurement` whose phase says so (an unreachable backend is Inconclusive, a bad
query an Error). A provider that *measured* something hands back the raw `result` and leaves
the verdict to the caller, which applies the metric's conditions in one place
(`headway.analysis.measurement`) and Headway's empty-result rule.

Three shapes of answer:

* `measured(...)`: a result to evaluate (a Prometheus vector as a list of floats, a scalar,
  a JSON value); `value` is the text Argo Rollouts would store for it.
* `decided(...)`: the provider itself knows the phase (a Job completed or failed; the backend
  could not be reached; the metric is misconfigured).
* `in_flight(...)`: an asynchronous measurement (a Job) still running; the caller calls
  `resume` at `resume_at` and `terminate` if the run stops first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from headway.analysis.measurement import MeasurementPhase
from headway.analysis.results import Measurement
from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.model.analysis import Metric

__all__ = [
    "MeasurementRequest",
    "MetricProvider",
    "ProviderMeasurement",
    "RecordedMeasurement",
    "RunRef",
    "SynchronousProvider",
    "decided",
    "in_flight",
    "measured",
    "unchanged",
    "unreachable",
]


@dataclass(frozen=True)
class RecordedMeasurement(Measurement):
    """A measurement as the run's status keeps it: with the provider's metadata."""

    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRef:
    """The AnalysisRun a measurement belongs to (Jobs are owned by it)."""

    name: str
    namespace: str
    uid: str
    api_version: str = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class MeasurementRequest:
    """One measurement to take: the metric (arguments resolved) and when it started."""

    run: RunRef
    metric: Metric
    started_at: datetime
    cluster: Cluster | None = None
    sequence: int = 1
    """1 for the metric's first measurement, then one more for each completed one (Job names)."""


@dataclass(frozen=True)
class ProviderMeasurement:
    phase: MeasurementPhase
    started_at: datetime
    finished_at: datetime | None = None
    message: str = ""
    value: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    resume_at: datetime | None = None
    has_result: bool = False
    result: Any = None
    query: str = ""
    """What was asked (a PromQL query, a URL): shown when the answer was empty."""


def measured(
    request: MeasurementRequest,
    *,
    result: Any,
    value: str,
    finished_at: datetime,
    query: str,
    metadata: Mapping[str, str] | None = None,
) -> ProviderMeasurement:
    """A result for the caller to evaluate; the phase stays Running until it does."""
    return ProviderMeasurement(
        MeasurementPhase.RUNNING,
        request.started_at,
        finished_at,
        value=value,
        metadata=dict(metadata or {}),
        has_result=True,
        result=result,
        query=query,
    )


def decided(
    request: MeasurementRequest,
    phase: MeasurementPhase,
    message: str,
    *,
    finished_at: datetime,
    metadata: Mapping[str, str] | None = None,
) -> ProviderMeasurement:
    return ProviderMeasurement(
        phase, request.started_at, finished_at, message=message, metadata=dict(metadata or {})
    )


def unreachable(
    request: MeasurementRequest, what: str, reason: str, *, finished_at: datetime
) -> ProviderMeasurement:
    """Headway's rule: no answer from the backend is no evidence either way: Inconclusive."""
    return decided(
        request,
        MeasurementPhase.INCONCLUSIVE,
        f"{what} could not be reached ({reason}); no evidence, so the measurement is Inconclusive",
        finished_at=finished_at,
    )


def in_flight(
    request: MeasurementRequest,
    *,
    resume_at: datetime,
    metadata: Mapping[str, str] | None = None,
    message: str = "",
) -> ProviderMeasurement:
    return ProviderMeasurement(
        MeasurementPhase.RUNNING,
        request.started_at,
        None,
        message=message,
        metadata=dict(metadata or {}),
        resume_at=resume_at,
    )


def unchanged(measurement: RecordedMeasurement) -> ProviderMeasurement:
    """Synchronous providers never leave a measurement in flight; echo it back."""
    return ProviderMeasurement(
        measurement.phase,
        measurement.started_at,
        measurement.finished_at,
        message=measurement.message,
        value="" if measurement.value is None else str(measurement.value),
        metadata=dict(measurement.metadata),
        resume_at=measurement.resume_at,
    )


class SynchronousProvider:
    """Base of providers that answer within `run` (prometheus, web, traffic).

    Nothing is ever left in flight, so `resume` and `terminate` echo the measurement back
    and there is nothing to collect. Subclasses set `_clock` and implement `run`.
    """

    _clock: Clock

    def _error(self, request: MeasurementRequest, message: str) -> ProviderMeasurement:
        return decided(request, MeasurementPhase.ERROR, message, finished_at=self._clock.now())

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        return unchanged(measurement)

    async def terminate(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        return unchanged(measurement)

    async def garbage_collect(self, request: MeasurementRequest, limit: int) -> None:
        return None


class MetricProvider(Protocol):
    """One kind of metric source (`prometheus`, `web`, `job`, a plugin)."""

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        """Take a measurement now."""
        ...

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        """Check on a measurement that was in flight (only asynchronous providers get this)."""
        ...

    async def terminate(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        """Stop a measurement in flight because the run is ending."""
        ...

    async def garbage_collect(self, request: MeasurementRequest, limit: int) -> None:
        """Remove what older measurements left behind, keeping the newest `limit`."""
        ...
