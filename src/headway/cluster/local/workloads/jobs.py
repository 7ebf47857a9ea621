"""The Job controller: run Pods to `completions`, `parallelism` at a time, within limits.

One step per Job:
  * finished Jobs (a `Complete` or `Failed` condition) are left alone;
  * failed = Failed pods (+ container restarts, for `restartPolicy: OnFailure`);
    failed > `backoffLimit` (default 6) -> delete active pods, `Failed`/`BackoffLimitExceeded`;
  * running longer than `activeDeadlineSeconds` -> delete active pods, `Failed`/`DeadlineExceeded`;
  * succeeded >= `completions` (default 1) -> `Complete`, `completionTime`;
  * else start pods up to min(parallelism, completions - succeeded) active, waiting the
    back-off (initial x 2^(failures-1), capped) after the latest failure first.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.local.workloads.replicasets import pod_from_template, pods_of
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_active, is_ready, restart_total
from headway.kubetime import format_time, parse_time
from headway.model.obj import Obj

__all__ = [
    "FIELD_MANAGER",
    "FailureBackoff",
    "JobTally",
    "job_verdict",
    "reconcile_job",
    "sync_jobs",
]

FIELD_MANAGER = "headway-job-controller"


class FailureBackoff(Protocol):
    """How long to wait before replacing a failed pod: the runtime config's `backoff`.

    A protocol, so the Job controller does not import the kubelet's config module (the two
    are sibling layers of the local runtime; `kubelet.images.BackoffConfig` fits it).
    """

    @property
    def initial_seconds(self) -> float: ...

    @property
    def max_seconds(self) -> float: ...


def _finished(job: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def _last_failure(pods: list[Obj]) -> datetime | None:
    times = [
        parse_time(
            (
                (s.get("state") or {}).get("terminated")
                or s.get("lastState", {}).get("terminated")
                or {}
            ).get("finishedAt")
        )
        for p in pods
        if (p.get("status") or {}).get("phase") == "Failed"
        for s in (p.get("status") or {}).get("containerStatuses") or []
    ]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _condition(kind: str, reason: str, message: str, stamp: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
    }


def _job_template(job: Obj) -> dict[str, Any]:
    template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
    meta = template.setdefault("metadata", {})
    uid, name = str(job["metadata"]["uid"]), str(job["metadata"]["name"])
    meta["labels"] = {
        **(meta.get("labels") or {}),
        "job-name": name,
        "controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "batch.kubernetes.io/controller-uid": uid,
    }
    return template


@dataclass(frozen=True)
class JobTally:
    active: list[Obj]
    succeeded: int
    failed: int


def _tally(job: Obj, pods: list[Obj]) -> JobTally:
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    failed = phases.count("Failed")
    template = (job.get("spec") or {}).get("template") or {}
    if (template.get("spec") or {}).get("restartPolicy") == "OnFailure":
        failed += sum(restart_total(p) for p in pods)
    return JobTally([p for p in pods if is_active(p)], phases.count("Succeeded"), failed)


def job_verdict(
    spec: Mapping[str, Any], tally: JobTally, *, running_seconds: float
) -> tuple[str, str, str] | None:
    """Purely computational: (condition, reason, message) once the Job is done, else None."""
    if tally.failed > int(spec.get("backoffLimit", 6)):
        return ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and running_seconds >= float(deadline):
        return ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
    if tally.succeeded >= int(spec.get("completions") or 1):
        return ("Complete", "", "")
    return None


def _start_pods(
    cluster: Cluster,
    clock: Clock,
    job: Obj,
    *,
    tally: JobTally,
    pods: list[Obj],
    backoff: FailureBackoff,
) -> tuple[list[Obj], float | None]:
    """Start pods up to the parallelism once the back-off allows; the active pods after it,
    and how long the back-off still holds new pods back (None when it does not)."""
    spec = job.get("spec") or {}
    completions = int(spec.get("completions") or 1)
    want = min(int(spec.get("parallelism", 1)), completions - tally.succeeded) - len(tally.active)
    wait = _backoff_left(pods, tally.failed, backoff, clock.now())
    if want <= 0:
        return tally.active, None
    if wait > 0:
        return tally.active, wait
    active = list(tally.active)
    for _ in range(want):
        pod = pod_from_template(job, _job_template(job), str(job["metadata"]["name"]))
        active.append(cluster.apply(pod, field_manager=FIELD_MANAGER))
        note(cluster, clock, job, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
    return active, None


def reconcile_job(
    cluster: Cluster, clock: Clock, job: Obj, *, backoff: FailureBackoff
) -> float | None:
    """One step for one Job; returns seconds until it wants another look, or None."""
    if _finished(job) or job["metadata"].get("deletionTimestamp"):
        return None
    spec, before, now = job.get("spec") or {}, job.get("status") or {}, clock.now()
    pods = pods_of(cluster, job)
    tally = _tally(job, pods)
    started = parse_time(before.get("startTime")) or now
    running = (now - started).total_seconds()
    verdict = job_verdict(spec, tally, running_seconds=running)
    status: dict[str, Any] = {"startTime": format_time(started)}
    conditions = list(before.get("conditions") or [])
    requeue: float | None = None
    active = tally.active
    if verdict is not None:
        kind, reason, message = verdict
        if kind == "Failed":
            _delete_all(cluster, active)
            active = []
        else:
            status["completionTime"] = format_time(now)
        conditions.append(_condition(kind, reason, message, format_time(now)))
        note(
            cluster,
            clock,
            job,
            reason or "Completed",
            message or "Job completed",
            warning=kind == "Failed",
        )
    else:
        active, requeue = _start_pods(cluster, clock, job, tally=tally, pods=pods, backoff=backoff)
        if spec.get("activeDeadlineSeconds") is not None:
            left = float(spec["activeDeadlineSeconds"]) - running
            requeue = min(requeue, left) if requeue is not None else left
    status.update(
        {
            "active": len(active),
            "succeeded": tally.succeeded,
            "failed": tally.failed,
            "ready": sum(1 for p in active if is_ready(p)),
        }
    )
    if conditions:
        status["conditions"] = [{k: v for k, v in c.items() if v != ""} for c in conditions]
    if status != before:
        meta = job["metadata"]
        cluster.patch_status("batch/v1", "Job", meta["name"], meta.get("namespace"), status)
    return requeue


def _backoff_left(pods: list[Obj], failed: int, backoff: FailureBackoff, now: datetime) -> float:
    if failed == 0:
        return 0.0
    last = _last_failure(pods)
    if last is None:
        return 0.0
    delay = min(backoff.initial_seconds * 2.0 ** (failed - 1), backoff.max_seconds)
    return max(0.0, delay - (now - last).total_seconds())


def _delete_all(cluster: Cluster, pods: list[Obj]) -> None:
    for pod in pods:
        with contextlib.suppress(NotFound):
            cluster.delete("v1", "Pod", pod["metadata"]["name"], pod["metadata"].get("namespace"))


def sync_jobs(cluster: Cluster, clock: Clock, *, backoff: FailureBackoff) -> float | None:
    return reconcile_each(
        cluster,
        clock,
        cluster.list("batch/v1", "Job"),
        lambda job: reconcile_job(cluster, clock, job, backoff=backoff),
    )
