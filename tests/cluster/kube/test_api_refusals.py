"""What a real API server refuses reaches the user as a condition, never a traceback: the
controllers run on the Kubernetes backend against the local runtime's API, with a 403, 422
or 429 injected in front of it (fixtures `fault-*.json`, each saying where it came from)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.kube.faults import FaultyApi
from headway.clock import VirtualClock
from headway.cluster.kube import KubeCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.controller import API_REFUSAL_RETRY_SECONDS, RolloutController

API = "argoproj.io/v1alpha1"


@pytest.fixture
def faulty(api: tuple[Path, Path]) -> Iterator[FaultyApi]:
    config, _ = api
    url = next(line.split()[-1] for line in config.read_text().splitlines()
               if "server:" in line)
    faults = FaultyApi(url)
    try:
        yield faults
    finally:
        faults.close()


def _rollout() -> dict[str, Any]:
    labels = {"app": "web"}
    return {
        "apiVersion": API, "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                 "strategy": {"canary": {"steps": [{"setWeight": 50}, {"pause": {}}]}}},
    }


def _condition(cluster: KubeCluster, kind: str) -> dict[str, Any] | None:
    status = cluster.get(API, "Rollout", "web", "default").get("status") or {}
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), None)


def _replica_sets(cluster: KubeCluster) -> list[str]:
    return [r["metadata"]["name"] for r in cluster.list("apps/v1", "ReplicaSet",
                                                        namespace="default")]


def test_a_forbidden_replica_set_write_is_a_condition_on_the_rollout_until_it_goes_through(
    faulty: FaultyApi, clock: VirtualClock
) -> None:
    cluster = faulty.cluster()
    cluster.apply(_rollout(), field_manager="test")
    faulty.inject("fault-403-replicasets.json")
    controller = RolloutController(cluster, clock)
    assert controller.step(ObjectKey("default", "web")) == API_REFUSAL_RETRY_SECONDS
    condition = _condition(cluster, "ReconcileError")
    assert condition is not None and condition["reason"] == "Forbidden"
    assert 'cannot patch resource "replicasets" in API group "apps" in the namespace ' \
        '"default"' in condition["message"]
    assert _replica_sets(cluster) == []
    events = cluster.list("v1", "Event", namespace="default")
    assert [e["reason"] for e in events] == ["ReconcileError"]

    faulty.clear()  # the operator granted the verb
    clock.advance(API_REFUSAL_RETRY_SECONDS)
    controller.step(ObjectKey("default", "web"))
    assert _condition(cluster, "ReconcileError") is None
    assert len(_replica_sets(cluster)) == 1


def test_a_429_that_persists_is_retried_as_the_server_asks_then_a_condition(
    faulty: FaultyApi, clock: VirtualClock
) -> None:
    sleeps: list[float] = []
    cluster = faulty.cluster(sleeps=sleeps)
    cluster.apply(_rollout(), field_manager="test")
    faulty.inject("fault-429-always.json")
    RolloutController(cluster, clock).step(ObjectKey("default", "web"))
    assert sleeps == [2.0, 2.0, 2.0, 2.0]  # Retry-After honoured, 5 requests in all
    condition = _condition(cluster, "ReconcileError")
    assert condition is not None and condition["reason"] == "Throttled"
    assert "Too many requests" in condition["message"]
