"""Sync windows: may a sync run at `now`? Purely computational.

A window is active from each time its cron `schedule` fires, in the window's `timeZone`,
for `duration`. Argo CD's decision: an active deny window blocks (a manual sync passes only
if every active deny window has `manualSync`); otherwise an active allow window permits;
otherwise, if allow windows exist but none is active, syncs are blocked (manual ones pass
when all those allow windows have `manualSync`); with no windows everything may sync.
`syncOverrun` lets an operation that started while allowed continue.

A window applies to an app when its `applications`, `namespaces` or `clusters` globs match
(any one of the set lists; all of them with `andOperator`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from headway.model.appproject import SyncWindow

__all__ = ["AppTarget", "WindowDecision", "matching_windows", "window_active", "window_decision"]


@dataclass(frozen=True)
class AppTarget:
    name: str
    namespace: str = ""
    server: str = ""
    cluster_name: str = ""


@dataclass(frozen=True)
class WindowDecision:
    allowed: bool
    reason: str
    active: tuple[SyncWindow, ...] = ()


def _zone(window: SyncWindow) -> ZoneInfo:
    try:
        return ZoneInfo(window.time_zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def window_active(window: SyncWindow, now: datetime) -> bool:
    """Whether a firing of the schedule lies in (now - duration, now]. The schedule is
    evaluated in the window's own time zone, so DST changes move it the way the zone does."""
    # Durations are absolute time: subtract in UTC, then look at the wall clock of the zone.
    now_utc = now.astimezone(UTC)
    start_utc = now_utc - timedelta(seconds=window.duration)
    start_local = start_utc.astimezone(_zone(window))
    fire: datetime = croniter(window.schedule, start_local).get_next(datetime)
    return start_utc < fire.astimezone(UTC) <= now_utc


def _glob(patterns: Sequence[str], value: str) -> bool:
    return bool(value) and any(fnmatch.fnmatchcase(value, p) for p in patterns)


def _applies(window: SyncWindow, app: AppTarget) -> bool:
    checks = []
    if window.applications:
        checks.append(_glob(window.applications, app.name))
    if window.clusters:
        checks.append(
            _glob(window.clusters, app.server) or _glob(window.clusters, app.cluster_name)
        )
    if window.namespaces:
        checks.append(_glob(window.namespaces, app.namespace))
    if not checks:
        return False
    return all(checks) if window.and_operator else any(checks)


def matching_windows(windows: Sequence[SyncWindow], app: AppTarget) -> tuple[SyncWindow, ...]:
    return tuple(w for w in windows if _applies(w, app))


def window_decision(
    now: datetime,
    windows: Sequence[SyncWindow],
    *,
    app: AppTarget,
    manual: bool = False,
    operation_started_at: datetime | None = None,
) -> WindowDecision:
    """May `app` sync at `now` under the project's `windows`?"""
    relevant = matching_windows(windows, app)
    decision = _decide_at(now, relevant, manual=manual)
    if decision.allowed or operation_started_at is None:
        return decision
    if (
        _may_overrun(now, relevant)
        and _decide_at(operation_started_at, relevant, manual=manual).allowed
    ):
        return WindowDecision(
            True, "operation started while allowed; syncOverrun lets it finish", decision.active
        )
    return decision


def _decide_at(moment: datetime, windows: Sequence[SyncWindow], *, manual: bool) -> WindowDecision:
    if not windows:
        return WindowDecision(True, "no sync windows apply")
    active = tuple(w for w in windows if window_active(w, moment))
    denies = [w for w in active if w.kind == "deny"]
    if denies:
        if manual and all(w.manual_sync for w in denies):
            return WindowDecision(True, "manual sync allowed during deny window", active)
        return WindowDecision(False, f"blocked by deny window {_describe(denies[0])}", active)
    if any(w.kind == "allow" for w in active):
        return WindowDecision(True, "inside an allow window", active)
    idle_allows = [w for w in windows if w.kind == "allow"]
    if idle_allows:
        if manual and all(w.manual_sync for w in idle_allows):
            return WindowDecision(True, "manual sync allowed outside allow windows", active)
        return WindowDecision(
            False, f"outside every allow window ({_describe(idle_allows[0])})", active
        )
    return WindowDecision(True, "no active window restricts syncing", active)


def _may_overrun(now: datetime, windows: Sequence[SyncWindow]) -> bool:
    """Argo CD: every deny window (if one is active) or every allow window (if none is)
    must have syncOverrun."""
    active_denies = [w for w in windows if w.kind == "deny" and window_active(w, now)]
    if active_denies:
        return all(w.sync_overrun for w in windows if w.kind == "deny")
    allows = [w for w in windows if w.kind == "allow"]
    return bool(allows) and all(w.sync_overrun for w in allows)


def _describe(window: SyncWindow) -> str:
    zone = window.time_zone or "UTC"
    hours = timedelta(seconds=window.duration)
    return f'"{window.schedule}" {zone} for {hours}'
