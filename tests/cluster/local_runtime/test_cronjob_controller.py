"""The CronJob controller on a virtual clock over the real store: schedules (with a time
zone), concurrency policies, starting deadlines, suspend and history limits. Jobs are
marked finished by the test (the Job controller runs real processes elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.workloads.cron_plan import CronError, CronJobSpec, cron_step
from headway.cluster.local.workloads.cronjobs import SCHEDULED_ANNOTATION, sync_cron_jobs
from headway.kubetime import format_time
from headway.model.obj import Obj

START = datetime(2026, 3, 1, 9, 59, 30, tzinfo=UTC)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START)


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", clock) as store:
        yield store


def cronjob(schedule: str = "*/5 * * * *", **spec: Any) -> Obj:
    task = {"restartPolicy": "Never", "containers": [{"name": "t", "image": "task"}]}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "report", "namespace": "default"},
            "spec": {"schedule": schedule, **spec,
                     "jobTemplate": {"metadata": {"labels": {"team": "ops"}},
                                     "spec": {"template": {"spec": task}}}}}


def job_names(cluster: LocalCluster) -> list[str]:
    return sorted(j["metadata"]["name"] for j in cluster.list("batch/v1", "Job"))


def finish(cluster: LocalCluster, clock: VirtualClock, name: str, *, ok: bool = True) -> None:
    kind = "Complete" if ok else "Failed"
    status: dict[str, Any] = {"conditions": [{"type": kind, "status": "True"}]}
    if ok:
        status["completionTime"] = format_time(clock.now())
    cluster.patch_status("batch/v1", "Job", name, "default", status)


def minutes(when: datetime) -> int:
    return int(when.timestamp() // 60)


def test_starts_a_job_at_each_schedule_time_and_not_before(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(cronjob(), field_manager="test")
    wake = sync_cron_jobs(cluster, clock)
    assert job_names(cluster) == [] and wake == 30.0  # 10:00:00 is 30 s away
    clock.advance(30)
    sync_cron_jobs(cluster, clock)
    ten = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    assert job_names(cluster) == [f"report-{minutes(ten)}"]
    job = cluster.get("batch/v1", "Job", f"report-{minutes(ten)}", "default")
    assert job["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2026-03-01T10:00:00Z"
    assert job["metadata"]["labels"] == {"team": "ops"}
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    status = cluster.get("batch/v1", "CronJob", "report", "default")["status"]
    assert status["lastScheduleTime"] == "2026-03-01T10:00:00Z"
    assert [ref["name"] for ref in status["active"]] == [f"report-{minutes(ten)}"]
    sync_cron_jobs(cluster, clock)
    assert len(job_names(cluster)) == 1  # the same time is not taken twice


def test_time_zone_moves_the_schedule(cluster: LocalCluster, clock: VirtualClock) -> None:
    # 11:00 in Berlin (UTC+1 in March before DST) is 10:00 UTC.
    cluster.apply(cronjob("0 11 * * *", timeZone="Europe/Berlin"), field_manager="test")
    clock.advance(30)
    sync_cron_jobs(cluster, clock)
    assert len(job_names(cluster)) == 1
    cluster.apply(cronjob("0 10 * * *", timeZone="Nowhere/Else"), field_manager="test")
    clock.advance(300)
    sync_cron_jobs(cluster, clock)
    events = [e["reason"] for e in cluster.list("v1", "Event", namespace="default")]
    assert "UnparseableSchedule" in events


def test_forbid_skips_while_one_runs_and_replace_replaces(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(cronjob(concurrencyPolicy="Forbid"), field_manager="test")
    clock.advance(30)
    sync_cron_jobs(cluster, clock)
    clock.advance(300)  # 10:05, the 10:00 Job still runs
    sync_cron_jobs(cluster, clock)
    assert len(job_names(cluster)) == 1
    cluster.apply(cronjob(concurrencyPolicy="Replace"), field_manager="test")
    sync_cron_jobs(cluster, clock)
    five = datetime(2026, 3, 1, 10, 5, tzinfo=UTC)
    assert job_names(cluster) == [f"report-{minutes(five)}"]


def test_allow_runs_side_by_side(cluster: LocalCluster, clock: VirtualClock) -> None:
    cluster.apply(cronjob(), field_manager="test")
    clock.advance(30)
    sync_cron_jobs(cluster, clock)
    clock.advance(300)
    sync_cron_jobs(cluster, clock)
    assert len(job_names(cluster)) == 2


def test_a_time_missed_past_the_starting_deadline_is_skipped(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(cronjob(startingDeadlineSeconds=60), field_manager="test")
    clock.advance(30 + 120)  # the controller first looks at 10:02: 10:00 is 2 min late
    sync_cron_jobs(cluster, clock)
    assert job_names(cluster) == []
    clock.advance(180)  # 10:05
    sync_cron_jobs(cluster, clock)
    assert len(job_names(cluster)) == 1


def test_suspend_starts_nothing(cluster: LocalCluster, clock: VirtualClock) -> None:
    cluster.apply(cronjob(suspend=True), field_manager="test")
    clock.advance(30)
    sync_cron_jobs(cluster, clock)
    assert job_names(cluster) == []


def test_history_limits_delete_the_oldest_finished_jobs(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(cronjob(successfulJobsHistoryLimit=2, failedJobsHistoryLimit=1),
                  field_manager="test")
    clock.advance(30)
    started: list[str] = []
    for ok in (True, True, False, True, False):
        sync_cron_jobs(cluster, clock)
        newest = max(set(job_names(cluster)) - set(started))
        started.append(newest)
        finish(cluster, clock, newest, ok=ok)
        clock.advance(300)
    sync_cron_jobs(cluster, clock)  # prunes, then starts the sixth
    kept = set(job_names(cluster)) - {max(job_names(cluster))}
    assert kept == {started[1], started[3], started[4]}
    status = cluster.get("batch/v1", "CronJob", "report", "default")["status"]
    assert "lastSuccessfulTime" in status


def test_a_bad_schedule_is_a_cron_error() -> None:
    spec = CronJobSpec(name="x", schedule="every minute", time_zone=None,
                       starting_deadline_seconds=None, concurrency="Allow", suspend=False,
                       successful_limit=3, failed_limit=1, created=START, last_scheduled=None)
    with pytest.raises(CronError, match=r"spec\.schedule"):
        cron_step(spec, [], now=START)
