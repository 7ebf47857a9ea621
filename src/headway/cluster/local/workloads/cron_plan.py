"""What a CronJob does now: purely computational, no side effects.

Kubernetes' CronJob controller (v2), on the clock it is given:
  * the schedule's most recent time `t` after the later of `status.lastScheduleTime` (else
    the CronJob's creation) and `now - startingDeadlineSeconds`, up to `now`, in
    `spec.timeZone` (an IANA name; the runtime's UTC without one). No such time: nothing to
    start, requeue at the next one;
  * `suspend: true` starts nothing (finished Jobs are still cleaned up);
  * a Job for `t` (named `<cronjob>-<t in minutes since the epoch>`) already existing: done;
  * `concurrencyPolicy`: `Allow` (default) starts it beside running Jobs, `Forbid` skips `t`
    while one runs, `Replace` deletes the running ones and starts it;
  * finished Jobs beyond `successfulJobsHistoryLimit` (3) / `failedJobsHistoryLimit` (1) are
    deleted, oldest scheduled first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

__all__ = ["CronError", "CronJobSpec", "CronStep", "JobView", "cron_step", "job_name"]


class CronError(ValueError):
    """A schedule or time zone the controller cannot use (named in an Event)."""


@dataclass(frozen=True)
class CronJobSpec:
    name: str
    schedule: str
    time_zone: str | None
    starting_deadline_seconds: int | None
    concurrency: str  # Allow | Forbid | Replace
    suspend: bool
    successful_limit: int
    failed_limit: int
    created: datetime
    last_scheduled: datetime | None


@dataclass(frozen=True)
class JobView:
    name: str
    scheduled: datetime  # its scheduled time (annotation), else its creation
    finished: bool
    succeeded: bool


@dataclass(frozen=True)
class CronStep:
    start: datetime | None = None  # the scheduled time to start a Job for
    delete: tuple[str, ...] = ()  # Jobs to delete: replaced ones and old history
    skipped: str = ""  # why `start` was not taken (an Event's message)
    next_run: datetime | None = None  # when to look again


def job_name(cronjob: str, scheduled: datetime) -> str:
    return f"{cronjob}-{int(scheduled.timestamp() // 60)}"


def _zone(spec: CronJobSpec) -> ZoneInfo:
    try:
        return ZoneInfo(spec.time_zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise CronError(f"spec.timeZone: unknown time zone {spec.time_zone!r}") from err


def _times(spec: CronJobSpec, now: datetime) -> tuple[datetime | None, datetime]:
    """(the most recent schedule time due and not yet taken, or None; the next one)."""
    if not croniter.is_valid(spec.schedule):
        raise CronError(f"spec.schedule: unparseable schedule {spec.schedule!r}")
    local_now = now.astimezone(_zone(spec))
    upcoming = croniter(spec.schedule, local_now).get_next(datetime).astimezone(UTC)
    latest = croniter(spec.schedule, local_now + timedelta(seconds=1)).get_prev(datetime)
    earliest = spec.last_scheduled or spec.created
    if spec.starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=spec.starting_deadline_seconds))
    due = latest.astimezone(UTC)
    return (due if due > earliest else None), upcoming


def _history(jobs: Sequence[JobView], spec: CronJobSpec) -> tuple[str, ...]:
    doomed: list[str] = []
    for succeeded, limit in ((True, spec.successful_limit), (False, spec.failed_limit)):
        done = sorted((j for j in jobs if j.finished and j.succeeded == succeeded),
                      key=lambda j: (j.scheduled, j.name))
        doomed.extend(j.name for j in done[: max(0, len(done) - limit)])
    return tuple(doomed)


def cron_step(spec: CronJobSpec, jobs: Sequence[JobView], *, now: datetime) -> CronStep:
    """The step for `now`. Raises `CronError` for a schedule or zone it cannot read."""
    history = _history(jobs, spec)
    due, upcoming = _times(spec, now)
    if spec.suspend or due is None:
        return CronStep(delete=history, next_run=upcoming)
    if any(j.name == job_name(spec.name, due) for j in jobs):
        return CronStep(delete=history, next_run=upcoming)
    running = tuple(j.name for j in jobs if not j.finished)
    if running and spec.concurrency == "Forbid":
        return CronStep(delete=history, next_run=upcoming,
                        skipped=f"Forbid: {', '.join(running)} still running")
    replaced = running if spec.concurrency == "Replace" else ()
    return CronStep(start=due, delete=(*replaced, *history), next_run=upcoming)
