"""Argo's reconcile histograms (names, labels, buckets) fed by the manager's steps, and the
error counters a failing step adds to."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prometheus_client.registry import CollectorRegistry

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import Manager, ObjectKey, ReconcileTimings
from headway.model.obj import Obj


class Named:
    """A step controller under one of the timed controllers' names."""

    watches = (("v1", "ConfigMap"),)

    def __init__(self, name: str, *, fail: int = 0) -> None:
        self.name = name
        self.fail = fail

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["name"])]

    def step(self, key: ObjectKey) -> float | None:
        if self.fail:
            self.fail -= 1
            raise RuntimeError("boom")
        return None


def configmap(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {}}


def buckets(registry: CollectorRegistry, metric: str) -> list[str]:
    family = next(f for f in registry.collect() if f.name == metric)
    return [s.labels["le"] for s in family.samples if s.name.endswith("_bucket")]


async def test_each_step_lands_in_argos_histograms_and_a_failure_counts_as_an_error(
    tmp_path: Path, clock: VirtualClock
) -> None:
    registry = CollectorRegistry()
    cluster = LocalCluster(tmp_path / "db", clock)
    manager = Manager(cluster, clock, resync_seconds=1e9, timings=ReconcileTimings(registry))
    for controller in (Named("rollouts", fail=1), Named("applications"), Named("other")):
        manager.register(controller)
    cluster.apply(configmap("web"), field_manager="t")
    await manager.run_once()  # rollouts fails, applications and other succeed
    clock.advance(1)  # the failed step's back-off
    await manager.run_once()
    rollout = {"namespace": "default", "name": "web"}
    assert registry.get_sample_value("rollout_reconcile_count", rollout) == 2
    assert registry.get_sample_value("rollout_reconcile_error_total", rollout) == 1
    assert registry.get_sample_value(
        "argocd_app_reconcile_count", {"namespace": "default", "dest_server": ""}) == 1
    assert registry.get_sample_value("analysis_run_reconcile_count", rollout) is None
    assert buckets(registry, "argocd_app_reconcile") == [
        "0.25", "0.5", "1.0", "2.0", "4.0", "8.0", "16.0", "+Inf"]
    assert buckets(registry, "rollout_reconcile") == [
        "0.01", "0.15", "0.25", "0.5", "1.0", "+Inf"]
