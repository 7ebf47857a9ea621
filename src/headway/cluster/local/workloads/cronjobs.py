"""The CronJob controller of the local runtime: Jobs on a schedule (decisions: `cron_plan`).

One step per CronJob: read its Jobs (owned through a controller `ownerReference`), take the
`cron_step` for the clock's now, delete what it says (in the background: a Job's Pods go
with it), create the Job from `spec.jobTemplate` with the annotation
`batch.kubernetes.io/cronjob-scheduled-timestamp`, and write `status.active`,
`lastScheduleTime` and `lastSuccessfulTime`. Returns the seconds until the next schedule
time, so the runtime wakes for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.cron_plan import (
    CronError,
    CronJobSpec,
    JobView,
    cron_step,
    job_name,
)
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.local.workloads.replicasets import owner_reference
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import owned_by
from headway.kubetime import format_time, parse_time
from headway.model.obj import Obj

__all__ = ["SCHEDULED_ANNOTATION", "reconcile_cron_job", "sync_cron_jobs"]

FIELD_MANAGER = "headway-cronjob-controller"
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def _spec(cj: Obj) -> CronJobSpec:
    meta, spec = cj["metadata"], cj.get("spec") or {}
    status = cj.get("status") or {}
    deadline = spec.get("startingDeadlineSeconds")
    return CronJobSpec(
        name=str(meta["name"]),
        schedule=str(spec.get("schedule") or ""),
        time_zone=spec.get("timeZone") if isinstance(spec.get("timeZone"), str) else None,
        starting_deadline_seconds=deadline if isinstance(deadline, int) else None,
        concurrency=str(spec.get("concurrencyPolicy") or "Allow"),
        suspend=spec.get("suspend") is True,
        successful_limit=_int(spec.get("successfulJobsHistoryLimit"), 3),
        failed_limit=_int(spec.get("failedJobsHistoryLimit"), 1),
        created=parse_time(meta.get("creationTimestamp")) or datetime.min,
        last_scheduled=parse_time(status.get("lastScheduleTime")),
    )


def _int(raw: object, default: int) -> int:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else default


def _finished(job: Mapping[str, Any]) -> tuple[bool, bool]:
    """(finished, succeeded) from the Job's Complete/Failed conditions."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return True, condition["type"] == "Complete"
    return False, False


def _view(job: Obj) -> JobView:
    meta = job["metadata"]
    scheduled = parse_time((meta.get("annotations") or {}).get(SCHEDULED_ANNOTATION))
    finished, succeeded = _finished(job)
    return JobView(name=str(meta["name"]),
                   scheduled=scheduled or parse_time(meta.get("creationTimestamp"))
                   or datetime.min,
                   finished=finished, succeeded=succeeded)


def _job_for(cj: Obj, scheduled: datetime) -> Obj:
    template = (cj.get("spec") or {}).get("jobTemplate") or {}
    meta = template.get("metadata") or {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(str(cj["metadata"]["name"]), scheduled),
            "namespace": cj["metadata"].get("namespace") or "default",
            "labels": dict(meta.get("labels") or {}),
            "annotations": {**(meta.get("annotations") or {}),
                            SCHEDULED_ANNOTATION: format_time(scheduled)},
            "ownerReferences": [owner_reference(cj)],
        },
        "spec": dict(template.get("spec") or {}),
    }


def reconcile_cron_job(cluster: Cluster, clock: Clock, cj: Obj) -> float | None:
    meta = cj["metadata"]
    if meta.get("deletionTimestamp"):
        return None
    namespace = meta.get("namespace") or "default"
    jobs = [j for j in cluster.list("batch/v1", "Job", namespace=namespace)
            if owned_by(j, str(meta.get("uid")))]
    now = clock.now()
    try:
        step = cron_step(_spec(cj), [_view(j) for j in jobs], now=now)
    except CronError as err:
        note(cluster, clock, cj, "UnparseableSchedule", str(err), warning=True)
        return None
    for name in step.delete:
        with contextlib.suppress(NotFound):
            cluster.delete("batch/v1", "Job", name, namespace, propagation_policy="Background")
            note(cluster, clock, cj, "SuccessfulDelete", f"Deleted job {name}")
    if step.skipped:
        note(cluster, clock, cj, "JobAlreadyActive", step.skipped)
    created = []
    if step.start is not None:
        job = cluster.apply(_job_for(cj, step.start), field_manager=FIELD_MANAGER)
        created.append(job)
        note(cluster, clock, cj, "SuccessfulCreate", f"Created job {job['metadata']['name']}")
    _write_status(cluster, cj, [j for j in jobs if j["metadata"]["name"] not in step.delete]
                  + created, step.start)
    return (step.next_run - now).total_seconds() if step.next_run else None


def _write_status(cluster: Cluster, cj: Obj, jobs: list[Obj], started: datetime | None) -> None:
    before = cj.get("status") or {}
    active = [{"apiVersion": "batch/v1", "kind": "Job", "name": j["metadata"]["name"],
               "namespace": j["metadata"].get("namespace"), "uid": j["metadata"].get("uid")}
              for j in jobs if not _finished(j)[0]]
    completions = [str(j.get("status", {}).get("completionTime")) for j in jobs
                   if _finished(j) == (True, True) and j.get("status", {}).get("completionTime")]
    status: dict[str, Any] = {
        "active": sorted(active, key=lambda ref: str(ref["name"])) or None,
        "lastScheduleTime": format_time(started) if started else before.get("lastScheduleTime"),
        "lastSuccessfulTime": max(completions, default=before.get("lastSuccessfulTime")),
    }
    status = {k: v for k, v in status.items() if v is not None}
    if status != before:
        meta = cj["metadata"]
        cluster.patch_status("batch/v1", "CronJob", meta["name"], meta.get("namespace"), status)


def sync_cron_jobs(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(cluster, clock, cluster.list("batch/v1", "CronJob"),
                          lambda cj: reconcile_cron_job(cluster, clock, cj))
