"""Sync windows at exact datetimes, including a time zone across a DST change."""

from __future__ import annotations

from datetime import UTC, datetime

from headway.model.appproject import SyncWindow
from headway.sync.windows import AppTarget, matching_windows, window_active, window_decision

APP = AppTarget(
    name="checkout", namespace="shop", server="https://prod.example.com", cluster_name="prod"
)


def window(
    kind: str,
    schedule: str,
    hours: float,
    *,
    tz: str = "",
    manual: bool = False,
    apps: tuple[str, ...] = ("*",),
    namespaces: tuple[str, ...] = (),
    clusters: tuple[str, ...] = (),
    and_operator: bool = False,
    overrun: bool = False,
) -> SyncWindow:
    return SyncWindow(
        kind,
        schedule,
        hours * 3600,
        apps,
        namespaces,
        clusters,
        manual,
        tz,
        and_operator,
        None,
        overrun,
    )


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_window_is_active_from_start_until_end() -> None:
    nightly = window("deny", "0 22 * * *", 2)
    assert not window_active(nightly, at(2026, 3, 2, 21, 59, 59))
    assert window_active(nightly, at(2026, 3, 2, 22, 0, 0))
    assert window_active(nightly, at(2026, 3, 2, 23, 59, 59))
    assert not window_active(nightly, at(2026, 3, 3, 0, 0, 0))


def test_friday_evening_freeze_in_a_time_zone_across_dst() -> None:
    # Fri 22:00 Europe/Berlin for 60h. Berlin is UTC+1 in March until the 29th, UTC+2 after.
    freeze = window("deny", "0 22 * * 5", 60, tz="Europe/Berlin")
    assert window_active(freeze, at(2026, 3, 20, 21, 0))  # Fri 22:00 CET
    assert not window_active(freeze, at(2026, 3, 20, 20, 59))
    assert window_active(freeze, at(2026, 3, 23, 8, 59))  # Mon 09:59 CET, 1 min to go
    assert not window_active(freeze, at(2026, 3, 23, 9, 0))
    # Fri 27 Mar 22:00 CET; Berlin moves to CEST on Sunday the 29th. 60 h is absolute time.
    assert window_active(freeze, at(2026, 3, 27, 21, 0))
    assert window_active(freeze, at(2026, 3, 30, 8, 59))
    assert not window_active(freeze, at(2026, 3, 30, 9, 0))
    # After the switch to CEST the same local 22:00 is 20:00 UTC.
    assert window_active(freeze, at(2026, 4, 3, 20, 0))
    assert not window_active(freeze, at(2026, 4, 3, 19, 59))


def test_deny_blocks_automated_and_manual_unless_manual_sync() -> None:
    deny = window("deny", "0 22 * * *", 2)
    now = at(2026, 3, 2, 22, 30)
    blocked = window_decision(now, [deny], app=APP)
    assert not blocked.allowed
    assert blocked.reason == 'blocked by deny window "0 22 * * *" UTC for 2:00:00'
    assert not window_decision(now, [deny], app=APP, manual=True).allowed
    lenient = window("deny", "0 22 * * *", 2, manual=True)
    assert window_decision(now, [lenient], app=APP, manual=True).allowed
    assert window_decision(at(2026, 3, 2, 12, 0), [deny], app=APP).allowed


def test_allow_windows_block_outside_them() -> None:
    office = window("allow", "0 9 * * 1-5", 8)
    assert window_decision(at(2026, 3, 2, 10, 0), [office], app=APP).allowed  # Monday
    outside = window_decision(at(2026, 3, 2, 18, 0), [office], app=APP)
    assert not outside.allowed
    assert outside.reason.startswith("outside every allow window")
    assert not window_decision(at(2026, 3, 7, 10, 0), [office], app=APP).allowed  # Saturday


def test_deny_wins_over_allow() -> None:
    windows = [window("allow", "0 0 * * *", 24), window("deny", "0 12 * * *", 1)]
    assert not window_decision(at(2026, 3, 2, 12, 30), windows, app=APP).allowed
    assert window_decision(at(2026, 3, 2, 13, 30), windows, app=APP).allowed


def test_sync_overrun_lets_a_started_operation_finish() -> None:
    deny = window("deny", "0 22 * * *", 2, overrun=True)
    now = at(2026, 3, 2, 22, 10)
    started = at(2026, 3, 2, 21, 55)
    assert window_decision(now, [deny], app=APP, operation_started_at=started).allowed
    strict = window("deny", "0 22 * * *", 2)
    assert not window_decision(now, [strict], app=APP, operation_started_at=started).allowed


def test_windows_select_apps_namespaces_and_clusters_with_globs() -> None:
    by_app = window("deny", "* * * * *", 1, apps=("check*",))
    by_ns = window("deny", "* * * * *", 1, apps=(), namespaces=("payments",))
    by_cluster = window("deny", "* * * * *", 1, apps=(), clusters=("prod",))
    both = window(
        "deny", "* * * * *", 1, apps=("checkout",), namespaces=("payments",), and_operator=True
    )
    either = window("deny", "* * * * *", 1, apps=("checkout",), namespaces=("payments",))
    assert matching_windows([by_app, by_ns, by_cluster, both, either], APP) == (
        by_app,
        by_cluster,
        either,
    )
