"""Sequences on which the local store once disagreed with structured-merge-diff, kept as
they were found (shrunk by Hypothesis) and checked against the oracle every run.

Each case says what Kubernetes does and what the store did before it was fixed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.ssa_oracle.oracle import Operation, StoreRunner, assert_agree, oracle_binary
from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster

CASES = {
    # An empty keyed list or set names no field: nobody owns it (the store owned it).
    "empty set list is owned by no one": [
        Operation("alice", "Apply", {"metadata": {"finalizers": []}}),
    ],
    # A LabelSelector is atomic: owned and replaced whole (the store merged it by key).
    "a selector is one field": [
        Operation("alice", "Apply", {"spec": {"selector": {"matchLabels": {"app": "a"}}}}),
        Operation("bob", "Apply", {"spec": {"selector": {"matchLabels": {"tier": "b"}}}}),
    ],
    # An item's key fields are owned with it (the store owned the item's other fields only).
    "key fields are owned": [
        Operation("alice", "Apply", {"spec": {"replicas": 1, "template": {"spec": {
            "containers": [{"name": "web"}]}}}}),
    ],
    # Pruning takes a field the applier held something under with all it holds once no
    # one owns anything there, an empty list included (the store left `containers: []`).
    "pruning takes unowned leftovers": [
        Operation("bob", "Apply", {"spec": {}}),
        Operation("alice", "Apply", {"spec": {"replicas": 1, "template": {"spec": {
            "containers": []}}}}),
        Operation("alice", "Apply", {}),
    ],
    # An update owns the maps it created, not only their leaves (the store: leaves only).
    "an update owns what it added": [
        Operation("alice", "Update", {"spec": {"replicas": 1}}),
    ],
    # A manager's updates and its applies are two owners: an apply conflicts with the same
    # manager's update (the store let it through).
    "an apply conflicts with its manager's update": [
        Operation("alice", "Update", {"spec": {"replicas": 2}}),
        Operation("alice", "Apply", {"spec": {"replicas": 1}}),
    ],
    # An atomic map owned through an update conflicts as one value.
    "an updated selector conflicts whole": [
        Operation("alice", "Update", {"spec": {"replicas": 1, "selector": {
            "matchLabels": {"app": "a"}}}}),
        Operation("alice", "Apply", {"spec": {"selector": {"matchLabels": {}}}}),
    ],
    # The applier owns an applied `{}` even where pruning took its unowned contents.
    "the applier keeps what it applied": [
        Operation("bob", "Apply", {"spec": {"replicas": 1, "selector": {"matchLabels": {}},
                                            "template": {"metadata": {}, "spec": {
                                                "containers": []}}}}),
        Operation("bob", "Apply", {"spec": {"replicas": 1, "template": {}}}),
    ],
    # Ownership ends when a write removes the field, not when it is found absent later.
    "ownership ends only by a removal": [
        Operation("bob", "Apply", {"spec": {"paused": False, "template": {"spec": {
            "containers": [], "serviceAccountName": "web"}}}}),
        Operation("bob", "Apply", {"spec": {"paused": False, "template": {
            "metadata": {}, "spec": {}}}}),
        Operation("alice", "Apply", {}),
    ],
    # Owning a keyed list or set is owning its existence: adding a member is no conflict
    # (the store compared the whole list).
    "adding to an owned set is no conflict": [
        Operation("alice", "Update", {"metadata": {"labels": {}, "finalizers": []}}),
        Operation("bob", "Apply", {"metadata": {"finalizers": ["x.io/a"]}}),
    ],
}


@pytest.fixture(scope="module")
def runner() -> Iterator[StoreRunner]:
    oracle_binary()
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(
        Path(tmp) / "cluster.db", VirtualClock()
    ) as store:
        yield StoreRunner(store)


@pytest.mark.parametrize("operations", list(CASES.values()), ids=list(CASES))
def test_the_store_agrees_with_structured_merge_diff(
    runner: StoreRunner, operations: list[Operation]
) -> None:
    assert_agree(runner, operations)
