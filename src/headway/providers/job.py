"""The `job` provider: a Job in the cluster is the measurement; its outcome is the phase.

As in Argo Rollouts: the Job is named `<run uid>.<metric>.<n>` (n counts the metric's
measurements from 1; the metric name is shortened to keep the name within 63 characters),
lives in the run's namespace, is owned by the AnalysisRun (deleted with it), and carries the
`analysisrun.argoproj.io/uid` label and the run's name, namespace and metric in annotations.
The measurement stays Running until the Job has a `Complete` condition (Successful) or a
`Failed` one (Failed). A Job already there from before a controller restart is reused when
the same run owns it. Terminating the run deletes a Job still running; garbage collection
keeps the newest `limit` finished Jobs of each metric.
"""

from __future__ import annotations

import contextlib
import copy
from datetime import timedelta
from typing import Any

from headway.analysis.measurement import MeasurementPhase
from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    RecordedMeasurement,
    decided,
    in_flight,
)

__all__ = ["FIELD_MANAGER", "JobProvider", "job_name"]

FIELD_MANAGER = "headway-analysis"
UID_LABEL = "analysisrun.argoproj.io/uid"
NAME_ANNOTATION = "analysisrun.argoproj.io/name"
NAMESPACE_ANNOTATION = "analysisrun.argoproj.io/namespace"
METRIC_ANNOTATION = "analysisrun.argoproj.io/metric-name"
NAME_LIMIT = 63
POLL = timedelta(seconds=1)


def job_name(uid: str, metric: str, sequence: int) -> str:
    name = f"{uid}.{metric}.{sequence}"
    if len(name) <= NAME_LIMIT:
        return name
    return f"{uid}.{metric[: len(metric) - (len(name) - NAME_LIMIT)]}.{sequence}"


def _job_object(request: MeasurementRequest) -> Obj:
    spec = request.metric.provider.job
    assert spec is not None, "the registry routes only job metrics here"
    run, metric = request.run, request.metric.name
    metadata = spec.metadata or {}
    job_spec: dict[str, Any] = copy.deepcopy(dict(spec.spec))
    template = job_spec.setdefault("template", {})
    pod_meta = template.setdefault("metadata", {})
    pod_meta["labels"] = {**(pod_meta.get("labels") or {}), UID_LABEL: run.uid}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(run.uid, metric, request.sequence),
            "namespace": run.namespace,
            "labels": {**(metadata.get("labels") or {}), UID_LABEL: run.uid},
            "annotations": {
                **(metadata.get("annotations") or {}),
                NAME_ANNOTATION: run.name,
                NAMESPACE_ANNOTATION: run.namespace,
                METRIC_ANNOTATION: metric,
            },
            "ownerReferences": [
                {
                    "apiVersion": run.api_version,
                    "kind": "AnalysisRun",
                    "name": run.name,
                    "uid": run.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": job_spec,
    }


def _owner_uid(job: Obj) -> str:
    for ref in job.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid", ""))
    return ""


def _outcome(job: Obj) -> tuple[MeasurementPhase, str] | None:
    name = job["metadata"]["name"]
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return MeasurementPhase.SUCCESSFUL, f"job {name} completed"
        if condition.get("type") == "Failed":
            why = condition.get("message") or condition.get("reason") or "failed"
            return MeasurementPhase.FAILED, f"job {name} failed: {why}"
    return None


class JobProvider:
    """Runs Jobs through the request's cluster (the controller's own)."""

    def __init__(self, clock: Clock, *, poll: timedelta = POLL) -> None:
        self._clock = clock
        self._poll = poll

    def _cluster(self, request: MeasurementRequest) -> Cluster:
        if request.cluster is None:
            raise ClusterError("the job provider needs a cluster")
        return request.cluster

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        wanted = _job_object(request)
        name, namespace = wanted["metadata"]["name"], wanted["metadata"]["namespace"]
        try:
            cluster = self._cluster(request)
            try:
                existing = cluster.get("batch/v1", "Job", name, namespace)
            except NotFound:
                cluster.apply(wanted, field_manager=FIELD_MANAGER)
            else:
                if _owner_uid(existing) != request.run.uid:
                    return self._error(
                        request, f"job {namespace}/{name} exists, owned by another run"
                    )
        except ClusterError as error:
            return self._error(request, f"cannot create job {namespace}/{name}: {error}")
        return in_flight(
            request,
            resume_at=self._clock.now(),
            metadata={"job-name": name, "job-namespace": namespace},
            message=f"job {name} started",
        )

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        name = measurement.metadata.get("job-name", "")
        namespace = measurement.metadata.get("job-namespace", request.run.namespace)
        try:
            job = self._cluster(request).get("batch/v1", "Job", name, namespace)
        except NotFound:
            return self._error(request, f"job {namespace}/{name} is gone", measurement)
        except ClusterError as error:
            return self._error(request, f"cannot read job {namespace}/{name}: {error}", measurement)
        outcome = _outcome(job)
        if outcome is None:
            return in_flight(
                request,
                resume_at=self._clock.now() + self._poll,
                metadata=measurement.metadata,
                message=measurement.message,
            )
        phase, message = outcome
        return decided(
            request, phase, message, finished_at=self._clock.now(), metadata=measurement.metadata
        )

    async def terminate(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        """As Argo: delete the Job and call the measurement Successful ("metric terminated")."""
        name = measurement.metadata.get("job-name", "")
        namespace = measurement.metadata.get("job-namespace", request.run.namespace)
        try:
            self._cluster(request).delete("batch/v1", "Job", name, namespace)
        except NotFound:
            pass
        except ClusterError as error:
            return self._error(
                request, f"cannot delete job {namespace}/{name}: {error}", measurement
            )
        return decided(
            request,
            MeasurementPhase.SUCCESSFUL,
            f"metric terminated; job {name} deleted",
            finished_at=self._clock.now(),
            metadata=measurement.metadata,
        )

    async def garbage_collect(self, request: MeasurementRequest, limit: int) -> None:
        """Delete this metric's finished Jobs beyond the newest `limit`."""
        cluster = self._cluster(request)
        jobs = [
            job
            for job in cluster.list(
                "batch/v1",
                "Job",
                namespace=request.run.namespace,
                label_selector={UID_LABEL: request.run.uid},
            )
            if job["metadata"].get("annotations", {}).get(METRIC_ANNOTATION) == request.metric.name
            and _outcome(job) is not None
        ]
        jobs.sort(key=lambda j: (j["metadata"].get("creationTimestamp", ""), _sequence(j)))
        for job in jobs[: max(0, len(jobs) - limit)]:
            with contextlib.suppress(NotFound):
                cluster.delete("batch/v1", "Job", job["metadata"]["name"], request.run.namespace)

    def _error(
        self,
        request: MeasurementRequest,
        message: str,
        measurement: RecordedMeasurement | None = None,
    ) -> ProviderMeasurement:
        metadata = measurement.metadata if measurement is not None else None
        return decided(
            request,
            MeasurementPhase.ERROR,
            message,
            finished_at=self._clock.now(),
            metadata=metadata,
        )


def _sequence(job: Obj) -> int:
    tail = str(job["metadata"]["name"]).rpartition(".")[2]
    return int(tail) if tail.isdigit() else 0
