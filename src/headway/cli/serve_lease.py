"""`headway serve` on Kubernetes: lead through a Lease (controllers/lease_lock.py) so that
of several replicas only one acts; the others wait as standbys and take over within the
lease duration after the leader stops renewing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys

from headway.clock import Clock
from headway.cluster.errors import ClusterError, NamespaceNotFound
from headway.cluster.protocol import Cluster
from headway.controllers.leader_lock import LeadershipHeld
from headway.controllers.lease_lock import LeaseLock, LeaseSettings

__all__ = ["keep_leading", "lead", "lease_name", "replica_identity"]


def replica_identity() -> str:
    """The Pod's name when run in one (`POD_NAME`, from the downward API), else host-pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


def lease_name(shard: int, shards: int) -> str:
    """The leader Lease of a replica: one for the whole controller, or one per shard."""
    default = LeaseSettings().name
    return default if shards == 1 else f"{default}-{shard}"


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


async def lead(cluster: Cluster, clock: Clock, stop: asyncio.Event,
               settings: LeaseSettings = LeaseSettings()) -> LeaseLock | None:  # noqa: B008
    """The lock once this replica leads; None when stopped while a standby."""
    lock = LeaseLock(cluster, clock, identity=replica_identity(), settings=settings)
    announced = False
    while not stop.is_set():
        try:
            lock.acquire()
            return lock
        except NamespaceNotFound:  # the Lease's namespace is made as installing Argo CD would
            cluster.apply({"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": settings.namespace}}, field_manager="headway")
            continue
        except LeadershipHeld as held:
            if not announced:
                print(f"standby: {held}; taking over when it stops renewing", flush=True)
                announced = True
        except ClusterError as err:
            print(f"error: cannot take the leader Lease {settings.namespace}/{settings.name}: "
                  f"{err}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
        await _pause(stop, settings.renew_every_seconds)
    return None


async def keep_leading(lock: LeaseLock, stop: asyncio.Event, lost: asyncio.Event) -> None:
    """Renew until stopped; when a renewal fails, set `lost` and `stop` (the controllers
    must stop acting before a standby can take over)."""
    while not stop.is_set():
        await _pause(stop, lock.settings.renew_every_seconds)
        if stop.is_set():
            return
        try:
            renewed = lock.renew()
        except ClusterError:
            renewed = False
        if not renewed:
            print("error: lost the leader Lease; stopping", file=sys.stderr, flush=True)
            lost.set()
            stop.set()
