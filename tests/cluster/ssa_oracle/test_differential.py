"""The local store's server-side apply against Kubernetes' structured-merge-diff library.

Each generated sequence of applies (several field managers, with and without force) and
updates (full replacements) runs through the local store and through the oracle
(tools/smd-oracle, built from Debian's golang-k8s-sigs-structured-merge-diff-dev); after
every operation both must agree on the object, on which fields each manager owns, and on
whether an apply was refused and for which (field, manager) pairs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings

from cluster.ssa_oracle.oracle import Operation, StoreRunner, assert_agree, oracle_binary
from cluster.ssa_oracle.strategies import sequences
from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster


@pytest.fixture(scope="module")
def runner() -> Iterator[StoreRunner]:
    oracle_binary()
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(
        Path(tmp) / "cluster.db", VirtualClock()
    ) as store:
        yield StoreRunner(store)


@settings(max_examples=200)
@given(sequences)
def test_the_store_decides_as_structured_merge_diff(
    runner: StoreRunner, operations: list[Operation]
) -> None:
    assert_agree(runner, operations)
