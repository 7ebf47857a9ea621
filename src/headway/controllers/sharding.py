"""Which controller replica owns which destination cluster: Argo CD's application controller
sharding, `legacy` algorithm. Purely computational.

A cluster's shard is the `shard` its cluster Secret names when that is below the number of
replicas; otherwise the FNV-1a (32-bit) hash of the cluster's ID (the Secret's UID) modulo
the replicas. A cluster without an ID (the in-cluster destination with no Secret) and a
destination that resolves to no cluster belong to shard 0, which reports the error.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Shards", "cluster_shard", "fnv1a_32", "shard_from_host_name"]

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a_32(data: bytes) -> int:
    """The 32-bit FNV-1a hash (Go's `hash/fnv` New32a), which Argo CD shards by."""
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def cluster_shard(*, cluster_id: str, requested: int | None, replicas: int) -> int:
    """The shard owning a cluster: `requested` (the Secret's `shard`) when it names one of
    the `replicas`, else the hash of `cluster_id`; shard 0 for a cluster without an ID."""
    if requested is not None and 0 <= requested < replicas:
        return requested
    if not cluster_id:
        return 0
    return fnv1a_32(cluster_id.encode()) % replicas


def shard_from_host_name(host_name: str) -> int | None:
    """A StatefulSet replica's ordinal from its host name (`headway-2` -> 2), as Argo CD
    infers its shard when none is given; None when the name does not end in `-<number>`."""
    _, dash, ordinal = host_name.rpartition("-")
    return int(ordinal) if dash and ordinal.isdigit() else None


@dataclass(frozen=True)
class Shards:
    """This replica's place: shard `shard` of `replicas`."""

    shard: int
    replicas: int

    def __post_init__(self) -> None:
        if self.replicas < 1:
            raise ValueError(f"the number of shards must be at least 1, not {self.replicas}")
        if not 0 <= self.shard < self.replicas:
            raise ValueError(
                f"shard {self.shard} is not one of the {self.replicas} shards "
                f"(0..{self.replicas - 1})"
            )

    def owns(self, *, cluster_id: str, requested: int | None) -> bool:
        return cluster_shard(cluster_id=cluster_id, requested=requested,
                             replicas=self.replicas) == self.shard
