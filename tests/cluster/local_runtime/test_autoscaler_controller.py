"""The HPA controller as a step function on a virtual clock, over the real store and the
Deployment/ReplicaSet controllers, with the Pods' usage given by the test (the /proc meter
is tested with real processes in test_e2e_autoscaler.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import deployment
from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.workloads import deployments, replicasets
from headway.cluster.local.workloads.autoscalers import Autoscalers
from headway.health import assess
from headway.health.status import HealthStatus
from headway.kubetime import format_time
from headway.model.obj import Obj


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", clock) as store:
        yield store


class Usage:
    """Every Pod uses `cpu` cores (None: no sample yet) and `memory` bytes."""

    def __init__(self) -> None:
        self.cpu: float | None = 0.05
        self.memory: float | None = 50e6

    def __call__(self, pod: Obj) -> tuple[float | None, float | None]:
        return self.cpu, self.memory


def web(replicas: int = 2) -> Obj:
    obj = deployment("web", "demo:v1", replicas=replicas, probe=False)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    return obj


def hpa(**spec: Any) -> Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
            **spec,
        },
    }


def settle(cluster: LocalCluster, clock: VirtualClock) -> None:
    """Deployment -> ReplicaSet -> Pods, every Pod running and ready (a fake kubelet)."""
    for _ in range(3):
        deployments.sync_deployments(cluster, clock)
        replicasets.sync_replica_sets(cluster, clock)
        for pod in cluster.list("v1", "Pod"):
            if not pod.get("status"):
                cluster.patch_status("v1", "Pod", pod["metadata"]["name"], "default", {
                    "phase": "Running", "conditions": [{
                        "type": "Ready", "status": "True",
                        "lastTransitionTime": format_time(clock.now())}]})


def replicas(cluster: LocalCluster) -> int:
    return int(cluster.get("apps/v1", "Deployment", "web", "default")["spec"]["replicas"])


def status(cluster: LocalCluster) -> Obj:
    return dict(cluster.get("autoscaling/v2", "HorizontalPodAutoscaler", "web", "default")
                ["status"])


def reasons(cluster: LocalCluster) -> dict[str, str]:
    return {c["type"]: f"{c['status']}/{c['reason']}" for c in status(cluster)["conditions"]}


@pytest.fixture
def usage() -> Usage:
    return Usage()


def test_busy_pods_scale_the_deployment_up_and_health_is_healthy(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(web(), field_manager="test")
    cluster.apply(hpa(), field_manager="test")
    settle(cluster, clock)
    controller = Autoscalers(usage=usage)
    usage.cpu = 0.09  # 90% of a 100m request against 50%: ceil(1.8 * 2) = 4
    controller.sync(cluster, clock)
    assert replicas(cluster) == 4
    found = status(cluster)
    assert found["desiredReplicas"] == 4 and found["currentReplicas"] == 2
    assert found["currentMetrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 90}}}]
    assert reasons(cluster) == {"AbleToScale": "True/SucceededRescale",
                                "ScalingActive": "True/ValidMetricFound",
                                "ScalingLimited": "False/DesiredWithinRange"}
    hpa_obj = cluster.get("autoscaling/v2", "HorizontalPodAutoscaler", "web", "default")
    assert assess(hpa_obj).status is HealthStatus.HEALTHY


def test_min_replicas_is_enforced_before_any_metric(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(web(replicas=1), field_manager="test")
    cluster.apply(hpa(minReplicas=3), field_manager="test")
    usage.cpu = None  # no sample: only the bound decides
    Autoscalers(usage=usage).sync(cluster, clock)
    assert replicas(cluster) == 3
    assert reasons(cluster)["ScalingLimited"] == "True/TooFewReplicas"


def test_scale_down_waits_out_the_stabilization_window_on_the_virtual_clock(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(web(replicas=6), field_manager="test")
    cluster.apply(hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}),
                  field_manager="test")
    settle(cluster, clock)
    controller = Autoscalers(usage=usage)
    usage.cpu = 0.05  # exactly on target: 6 stays, recommended 6 at t=0
    controller.sync(cluster, clock)
    usage.cpu = 0.01  # 10%: ceil(0.2 * 6) = 2
    clock.advance(30)
    controller.sync(cluster, clock)
    assert replicas(cluster) == 6  # 6 is still in the window
    clock.advance(31)  # t=61: the recommendation of 6 has left the window
    controller.sync(cluster, clock)
    assert replicas(cluster) == 2


def test_scale_up_policies_limit_the_rate(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(web(), field_manager="test")
    cluster.apply(hpa(behavior={"scaleUp": {"policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 30}]}}), field_manager="test")
    settle(cluster, clock)
    controller = Autoscalers(usage=usage)
    usage.cpu = 0.2  # 400%: wants 8
    controller.sync(cluster, clock)
    assert replicas(cluster) == 3
    assert reasons(cluster)["ScalingLimited"] == "True/ScaleUpLimit"
    settle(cluster, clock)
    clock.advance(10)
    controller.sync(cluster, clock)
    assert replicas(cluster) == 3  # the 30s period has already added its one
    clock.advance(21)
    controller.sync(cluster, clock)
    assert replicas(cluster) == 4


def test_a_pod_without_a_cpu_request_is_a_failed_metric(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    bare = web()
    del bare["spec"]["template"]["spec"]["containers"][0]["resources"]
    cluster.apply(bare, field_manager="test")
    cluster.apply(hpa(), field_manager="test")
    settle(cluster, clock)
    Autoscalers(usage=usage).sync(cluster, clock)
    found = {c["type"]: c for c in status(cluster)["conditions"]}
    assert found["ScalingActive"]["reason"] == "FailedGetResourceMetric"
    assert "missing request for cpu" in found["ScalingActive"]["message"]
    assert replicas(cluster) == 2


def test_a_missing_target_cannot_scale(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(hpa(), field_manager="test")
    Autoscalers(usage=usage).sync(cluster, clock)
    assert reasons(cluster) == {"AbleToScale": "False/FailedGetScale"}
    hpa_obj = cluster.get("autoscaling/v2", "HorizontalPodAutoscaler", "web", "default")
    assert assess(hpa_obj).status is HealthStatus.DEGRADED


def test_memory_average_value_scales_up(
    cluster: LocalCluster, clock: VirtualClock, usage: Usage
) -> None:
    cluster.apply(web(), field_manager="test")
    cluster.apply(hpa(metrics=[{"type": "Resource", "resource": {
        "name": "memory", "target": {"type": "AverageValue", "averageValue": "100M"}}}]),
        field_manager="test")
    settle(cluster, clock)
    usage.memory = 150e6
    Autoscalers(usage=usage).sync(cluster, clock)
    assert replicas(cluster) == 3
    assert status(cluster)["currentMetrics"][0]["resource"]["current"] == {
        "averageValue": "150000000"}
