"""Leader election over a Lease: one leader at a time, takeover only after the lease
expired, a leader that could not renew knows it lost, and two replicas that both saw no
Lease do not both lead (the race widened by serving one of them a stale read)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from headway.clock import VirtualClock
from headway.cluster.errors import NotFound
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.leader_lock import LeadershipHeld
from headway.controllers.lease_lock import LeaseAction, LeaseLock, LeaseSettings, decide
from headway.model.obj import Obj

SETTINGS = LeaseSettings(name="lead", namespace="default", duration_seconds=15)


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "store.db", clock) as cluster:
        yield cluster


def _lock(cluster: Cluster, clock: VirtualClock, identity: str) -> LeaseLock:
    return LeaseLock(cluster, clock, identity=identity, settings=SETTINGS)


def _lease(holder: str, renewed: str, duration: int = 15) -> Obj:
    return {"spec": {"holderIdentity": holder, "renewTime": renewed,
                     "leaseDurationSeconds": duration}}


def test_decide_from_the_lease_as_read(clock: VirtualClock) -> None:
    now = clock.now()
    stamp = "2026-01-01T00:00:00Z"  # the virtual clock's start
    assert decide(None, identity="a", now=now) is LeaseAction.CREATE
    assert decide(_lease("a", stamp), identity="a", now=now) is LeaseAction.RENEW
    assert decide(_lease("b", stamp), identity="a", now=now) is LeaseAction.WAIT
    later = now + timedelta(seconds=15)
    assert decide(_lease("b", stamp), identity="a", now=later) is LeaseAction.TAKE_OVER
    assert decide(_lease("", stamp), identity="a", now=now) is LeaseAction.TAKE_OVER


def test_a_standby_takes_over_only_after_the_leader_stopped_renewing(
    store: LocalCluster, clock: VirtualClock
) -> None:
    leader, standby = _lock(store, clock, "a"), _lock(store, clock, "b")
    leader.acquire()
    with pytest.raises(LeadershipHeld, match="replica a"):
        standby.acquire()
    clock.advance(10)
    assert leader.renew()
    clock.advance(10)  # 20 s after acquiring, 10 s after the renewal: still held
    with pytest.raises(LeadershipHeld):
        standby.acquire()
    clock.advance(5)  # 15 s without a renewal: expired
    standby.acquire()
    assert not leader.renew()  # the old leader learns it lost and must stop acting
    lease = store.get("coordination.k8s.io/v1", "Lease", "lead", "default")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("b", 1)


def test_a_released_lease_is_taken_at_once(store: LocalCluster, clock: VirtualClock) -> None:
    leader, standby = _lock(store, clock, "a"), _lock(store, clock, "b")
    leader.acquire()
    leader.release()
    standby.acquire()
    assert standby.leading and not leader.leading


class StaleReads:
    """A cluster whose `get` of the Lease says it does not exist: the replica decides as
    if it were first, so its write races the real creator's."""

    def __init__(self, inner: Cluster) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        raise NotFound(f"{kind} {name} (a stale read)")


def test_two_replicas_that_both_saw_no_lease_do_not_both_lead(
    store: LocalCluster, clock: VirtualClock
) -> None:
    first = _lock(store, clock, "a")
    late = _lock(StaleReads(store), clock, "b")  # type: ignore[arg-type]
    first.acquire()
    clock.advance(1)
    with pytest.raises(LeadershipHeld):
        late.acquire()  # its create conflicts on spec.holderIdentity instead of overwriting
    lease = store.get("coordination.k8s.io/v1", "Lease", "lead", "default")
    assert lease["spec"]["holderIdentity"] == "a"


def test_a_renewal_racing_a_takeover_loses(store: LocalCluster, clock: VirtualClock) -> None:
    """The takeover is a PUT with the version the standby read: a renewal that lands in
    between makes it a Conflict, and the standby does not lead."""
    leader, standby = _lock(store, clock, "a"), _lock(store, clock, "b")
    leader.acquire()
    clock.advance(16)
    read = store.get("coordination.k8s.io/v1", "Lease", "lead", "default")
    assert leader.renew()  # lands after the standby's read

    class Frozen(StaleReads):
        def get(self, api_version: str, kind: str, name: str,
                namespace: str | None = None) -> Obj:
            return read

    racing = _lock(Frozen(store), clock, "b")  # type: ignore[arg-type]
    with pytest.raises(LeadershipHeld):
        racing.acquire()
    assert leader.renew() and not standby.leading
