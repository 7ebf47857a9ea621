"""Leader election over a `coordination.k8s.io/v1` Lease, for replicas of `headway serve`
on a Kubernetes cluster (the `LeaderLock` of leader_lock.py, which a state directory's file
lock cannot be across machines).

`decide` is purely computational: from the Lease as read, this replica's identity and the
time, whether to create it, renew it, take it over (its holder let it expire), or leave it
to its holder. Every write is a compare-and-swap: creation is a server-side apply under a
field manager named after the replica (a second creator's apply conflicts on
`spec.holderIdentity` instead of overwriting it), renewal and takeover are PUTs carrying
the `resourceVersion` read (a concurrent writer makes them `Conflict`). So of two replicas
at most one believes it leads at any moment the server has ordered; a leader that cannot
renew within the lease duration must stop acting (`renew` returns False) before a standby
can take over, since the standby waits for the whole duration after the last renewal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, FieldConflict, NotFound
from headway.cluster.protocol import Cluster
from headway.kubetime import format_precise_time, parse_time
from headway.model.obj import Obj
from headway.state_lock import Holder, LockHeld

__all__ = ["LeaseAction", "LeaseHolder", "LeaseLock", "LeaseSettings", "decide"]

LEASE_API = "coordination.k8s.io/v1"


@dataclass(frozen=True)
class LeaseHolder(Holder):
    """The replica a Lease names (no pid: it may run on another machine)."""

    def __str__(self) -> str:
        since = f", since {self.since}" if self.since else ""
        return f"replica {self.host or '(none)'}{since}"


class LeaseAction(StrEnum):
    CREATE = "create"
    RENEW = "renew"
    TAKE_OVER = "take-over"
    WAIT = "wait"  # another replica holds an unexpired lease


@dataclass(frozen=True)
class LeaseSettings:
    name: str = "headway-controller"
    namespace: str = "argocd"
    duration_seconds: int = 15  # a standby takes over this long after the last renewal
    renew_every_seconds: float = 5.0


def _expires(lease: Obj) -> datetime | None:
    spec = lease.get("spec") or {}
    renewed = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    duration = spec.get("leaseDurationSeconds")
    if renewed is None or not isinstance(duration, int):
        return None
    return renewed + timedelta(seconds=duration)


def decide(lease: Obj | None, *, identity: str, now: datetime) -> LeaseAction:
    """What this replica does with the Lease as read."""
    if lease is None:
        return LeaseAction.CREATE
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    if holder == identity:
        return LeaseAction.RENEW
    expires = _expires(lease)
    if not holder or expires is None or expires <= now:
        return LeaseAction.TAKE_OVER
    return LeaseAction.WAIT


class LeaseLock:
    """A `LeaderLock` over a Lease in `cluster`; `identity` names this replica."""

    def __init__(self, cluster: Cluster, clock: Clock, *, identity: str,
                 settings: LeaseSettings = LeaseSettings()) -> None:
        self.cluster, self.clock, self.identity, self.settings = cluster, clock, identity, settings
        self.leading = False

    def acquire(self) -> None:
        """Lead from now on, or raise `LeadershipHeld` naming the holder (never waits)."""
        if not self._try():
            raise LockHeld(self._holder(), f"Lease {self.settings.namespace}/"
                           f"{self.settings.name}")

    def renew(self) -> bool:
        """Renew the lease; False when this replica no longer leads (it must stop acting)."""
        self.leading = self.leading and self._try()
        return self.leading

    def release(self) -> None:
        """Give the lease up at once (a standby need not wait for it to expire)."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = self._read()
            if lease and (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                spec = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
                self.cluster.update({**lease, "spec": spec}, field_manager=self._manager)
        except ClusterError:  # it expires on its own
            return

    @property
    def _manager(self) -> str:
        return f"headway-leader-{self.identity}"[:128]

    def _read(self) -> Obj | None:
        try:
            return self.cluster.get(LEASE_API, "Lease", self.settings.name,
                                    self.settings.namespace)
        except NotFound:
            return None

    def _try(self) -> bool:
        now = self.clock.now()
        lease = self._read()
        action = decide(lease, identity=self.identity, now=now)
        try:
            if action is LeaseAction.CREATE:
                self.cluster.apply(self._lease(now, acquired=now, transitions=0),
                                   field_manager=self._manager)
            elif action is not LeaseAction.WAIT and lease is not None:
                self._swap(lease, action, now)
            else:
                return False
        except (Conflict, FieldConflict):  # another replica wrote first
            return False
        self.leading = True
        return True

    def _swap(self, lease: Obj, action: LeaseAction, now: datetime) -> None:
        spec = lease.get("spec") or {}
        transitions = int(spec.get("leaseTransitions") or 0)
        if action is LeaseAction.TAKE_OVER:
            acquired, transitions = now, transitions + 1
        else:
            acquired = parse_time(spec.get("acquireTime")) or now
        body = self._lease(now, acquired=acquired, transitions=transitions)
        body["metadata"]["resourceVersion"] = lease["metadata"]["resourceVersion"]
        self.cluster.update(body, field_manager=self._manager)

    def _lease(self, now: datetime, *, acquired: datetime, transitions: int) -> Obj:
        return {
            "apiVersion": LEASE_API, "kind": "Lease",
            "metadata": {"name": self.settings.name, "namespace": self.settings.namespace},
            "spec": {"holderIdentity": self.identity,
                     "leaseDurationSeconds": self.settings.duration_seconds,
                     "acquireTime": format_precise_time(acquired),
                     "renewTime": format_precise_time(now),
                     "leaseTransitions": transitions},
        }

    def _holder(self) -> LeaseHolder:
        lease = self._read() or {}
        spec = lease.get("spec") or {}
        return LeaseHolder(pid=0, host=str(spec.get("holderIdentity") or ""),
                      since=str(spec.get("acquireTime") or ""))
