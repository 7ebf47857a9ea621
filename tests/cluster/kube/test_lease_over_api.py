"""Leader election through the Kubernetes backend: the local runtime's API serves Leases,
and its answers to the lock's compare-and-swap writes (a 409 to a stale PUT, a 409 with
causes to a competing create) keep a second replica from leading until the lease expires."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from cluster.contract.workers import open_kube
from headway.clock import VirtualClock
from headway.controllers.leader_lock import LeadershipHeld
from headway.controllers.lease_lock import LeaseLock, LeaseSettings

SETTINGS = LeaseSettings(name="headway-controller", namespace="default", duration_seconds=15)


def test_one_leader_through_the_api_and_a_takeover_after_expiry(
    api: tuple[Path, Path], clock: VirtualClock
) -> None:
    config, _ = api
    url = next(line.split()[-1] for line in config.read_text().splitlines()
               if "server:" in line)
    with open_kube(url) as one, open_kube(url) as two:
        leader = LeaseLock(one, clock, identity="pod-a", settings=SETTINGS)
        standby = LeaseLock(two, clock, identity="pod-b", settings=SETTINGS)
        leader.acquire()
        with pytest.raises(LeadershipHeld, match="replica pod-a"):
            standby.acquire()
        clock.advance(16)
        standby.acquire()
        assert not leader.renew()
        lease = httpx2.get(f"{url}/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                           "headway-controller").json()
        assert lease["spec"]["holderIdentity"] == "pod-b"
