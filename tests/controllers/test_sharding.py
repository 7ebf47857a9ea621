"""Argo CD's application controller sharding, `legacy` algorithm: which replica owns which
destination cluster (pure)."""

from __future__ import annotations

import pytest

from headway.controllers.sharding import Shards, cluster_shard, fnv1a_32, shard_from_host_name


def test_fnv1a_32_matches_the_reference_vectors() -> None:
    # Go's hash/fnv New32a (and the FNV reference): "", "a", "foobar".
    assert [fnv1a_32(b""), fnv1a_32(b"a"), fnv1a_32(b"foobar")] == [
        0x811C9DC5, 0xE40C292C, 0xBF9CF968]


def test_a_cluster_without_a_requested_shard_goes_where_its_id_hashes() -> None:
    uid = "1d6c1c33-8a0f-4b4e-9c0e-2f6b1b7f4b11"
    for replicas in (1, 2, 3, 7):
        assert cluster_shard(cluster_id=uid, requested=None, replicas=replicas) == (
            fnv1a_32(uid.encode()) % replicas)
    assert cluster_shard(cluster_id="", requested=None, replicas=5) == 0  # in-cluster


def test_the_secrets_shard_wins_unless_no_replica_has_it() -> None:
    uid = "any-uid"
    hashed = fnv1a_32(uid.encode()) % 3
    assert cluster_shard(cluster_id=uid, requested=2, replicas=3) == 2
    assert cluster_shard(cluster_id=uid, requested=0, replicas=3) == 0
    # Argo CD: a shard beyond the replicas is warned about and assigned automatically.
    assert cluster_shard(cluster_id=uid, requested=3, replicas=3) == hashed


def test_a_replica_owns_exactly_its_shards_clusters() -> None:
    ids = [f"cluster-{i}" for i in range(40)]
    owners = [[Shards(s, 3).owns(cluster_id=c, requested=None) for s in range(3)] for c in ids]
    assert all(row.count(True) == 1 for row in owners)
    assert {row.index(True) for row in owners} == {0, 1, 2}


def test_the_shard_comes_from_a_statefulset_pods_name() -> None:
    assert shard_from_host_name("headway-2") == 2
    assert shard_from_host_name("argocd-application-controller-0") == 0
    assert shard_from_host_name("headway") is None
    assert shard_from_host_name("headway-abc12") is None


@pytest.mark.parametrize(("shard", "replicas"), [(2, 2), (-1, 2), (0, 0)])
def test_a_shard_outside_the_replicas_is_refused_with_the_range(shard: int, replicas: int) -> None:
    with pytest.raises(ValueError, match="shard"):
        Shards(shard, replicas)
