"""Retry schedule at exact times, and the automated-sync decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from headway.model.application import Automated, Backoff, Retry
from headway.sync.autosync import AutoSyncAction, LastOperation, ResourceState, decide_auto_sync
from headway.sync.retry import (
    AUTOMATED_DEFAULT_RETRY,
    DEFAULT_BACKOFF,
    retry_delay,
    retry_schedule,
    self_heal_delay,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
AUTO = Automated(prune=True, self_heal=False, allow_empty=False, enabled=True)
OUT = [ResourceState(synced=False), ResourceState(synced=True)]


def test_argo_default_backoff_is_5s_doubling_capped_at_3m() -> None:
    assert Backoff(duration=5.0, factor=2, max_duration=180.0) == DEFAULT_BACKOFF
    delays = [retry_delay(n).total_seconds() for n in range(8)]
    assert delays == [5, 10, 20, 40, 80, 160, 180, 180]


def test_retry_schedule_exact_times() -> None:
    retry = Retry(
        limit=5, refresh=False, backoff=Backoff(duration=10.0, factor=2, max_duration=180.0)
    )
    times = retry_schedule(T0, retry, attempt_takes=1.0)
    assert [t - T0 for t in times] == [
        timedelta(seconds=10),
        timedelta(seconds=10 + 1 + 20),
        timedelta(seconds=31 + 1 + 40),
        timedelta(seconds=72 + 1 + 80),
        timedelta(seconds=153 + 1 + 160),
    ]


def test_self_heal_backoff_is_2s_tripling_capped_at_5m() -> None:
    assert [self_heal_delay(n).total_seconds() for n in range(8)] == [
        0,
        2,
        6,
        18,
        54,
        162,
        300,
        300,
    ]


def test_new_revision_out_of_sync_syncs_now_with_prune() -> None:
    decision = decide_auto_sync(T0, automated=AUTO, out_of_sync=True, revision="b2", resources=OUT)
    assert decision.action is AutoSyncAction.SYNC
    assert decision.prune and decision.at == T0
    assert decision.reason == "Initiated automated sync to 'b2'"


def test_preconditions() -> None:
    manual = decide_auto_sync(T0, automated=None, out_of_sync=True, revision="r", resources=OUT)
    synced = decide_auto_sync(T0, automated=AUTO, out_of_sync=False, revision="r", resources=OUT)
    busy = decide_auto_sync(
        T0, automated=AUTO, out_of_sync=True, revision="r", resources=OUT, operation_running=True
    )
    assert {manual.action, synced.action, busy.action} == {AutoSyncAction.SKIP}
    no_prune = Automated(prune=False, self_heal=False, allow_empty=False, enabled=True)
    only_prunes = [ResourceState(synced=True), ResourceState(synced=False, requires_pruning=True)]
    decision = decide_auto_sync(
        T0, automated=no_prune, out_of_sync=True, revision="r", resources=only_prunes
    )
    assert decision.reason == "only pruning is needed and automated prune is off"


def test_never_prunes_everything_unless_allow_empty() -> None:
    everything = [ResourceState(synced=False, requires_pruning=True)] * 3
    decision = decide_auto_sync(
        T0, automated=AUTO, out_of_sync=True, revision="c3", resources=everything
    )
    assert decision.action is AutoSyncAction.SYNC_ERROR
    assert decision.reason == "Skipping sync attempt to c3: auto-sync will wipe out all resources"
    allow = Automated(prune=True, self_heal=False, allow_empty=True, enabled=True)
    ok = decide_auto_sync(
        T0, automated=allow, out_of_sync=True, revision="c3", resources=everything
    )
    assert ok.action is AutoSyncAction.SYNC


def test_self_heal_waits_for_its_backoff() -> None:
    heal = Automated(prune=True, self_heal=True, allow_empty=False, enabled=True)
    last = LastOperation("r1", succeeded=True, finished_at=T0, self_heal_attempts=2)
    early = decide_auto_sync(
        T0 + timedelta(seconds=5),
        automated=heal,
        out_of_sync=True,
        revision="r1",
        resources=OUT,
        last=last,
    )
    assert early.action is AutoSyncAction.WAIT and early.at == T0 + timedelta(seconds=6)
    due = decide_auto_sync(
        T0 + timedelta(seconds=6),
        automated=heal,
        out_of_sync=True,
        revision="r1",
        resources=OUT,
        last=last,
    )
    assert due.action is AutoSyncAction.SYNC and due.self_heal_attempts == 3
    off = decide_auto_sync(
        T0, automated=AUTO, out_of_sync=True, revision="r1", resources=OUT, last=last
    )
    assert off.action is AutoSyncAction.SKIP


def test_failed_revision_is_retried_with_backoff_then_sync_error() -> None:
    """Headway's difference: Argo CD would skip this revision forever."""
    retry = Retry(
        limit=2, refresh=False, backoff=Backoff(duration=10.0, factor=3, max_duration=60.0)
    )

    def decide(now: datetime, reattempts: int) -> object:
        last = LastOperation(
            "r7",
            succeeded=False,
            finished_at=T0,
            message="webhook timeout",
            failed_reattempts=reattempts,
        )
        return decide_auto_sync(
            now,
            automated=AUTO,
            out_of_sync=True,
            revision="r7",
            resources=OUT,
            last=last,
            retry=retry,
        )

    waiting = decide(T0 + timedelta(seconds=9), 0)
    assert waiting.action is AutoSyncAction.WAIT  # type: ignore[attr-defined]
    assert waiting.at == T0 + timedelta(seconds=10)  # type: ignore[attr-defined]
    first = decide(T0 + timedelta(seconds=10), 0)
    assert first.action is AutoSyncAction.SYNC and first.failed_reattempts == 1  # type: ignore[attr-defined]
    second_wait = decide(T0, 1)
    assert second_wait.at == T0 + timedelta(seconds=30)  # type: ignore[attr-defined]
    spent = decide(T0 + timedelta(hours=1), 2)
    assert spent.action is AutoSyncAction.SYNC_ERROR  # type: ignore[attr-defined]
    assert spent.reason == (  # type: ignore[attr-defined]
        "Failed last sync attempt to r7: webhook timeout (retried 2 times; retry budget spent)"
    )


def test_automated_default_retry_limit_is_five() -> None:
    assert AUTOMATED_DEFAULT_RETRY.limit == 5
    last = LastOperation("r", succeeded=False, finished_at=T0, failed_reattempts=5)
    decision = decide_auto_sync(
        T0, automated=AUTO, out_of_sync=True, revision="r", resources=OUT, last=last
    )
    assert decision.action is AutoSyncAction.SYNC_ERROR


def test_a_newer_revision_is_synced_at_once_after_a_failure() -> None:
    last = LastOperation("old", succeeded=False, finished_at=T0, failed_reattempts=5)
    decision = decide_auto_sync(
        T0, automated=AUTO, out_of_sync=True, revision="new", resources=OUT, last=last
    )
    assert decision.action is AutoSyncAction.SYNC
