"""End to end: an HPA scales a Deployment on the real CPU of its Pods' processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.local_runtime.harness import running_runtime
from headway.health import assess
from headway.health.status import HealthStatus
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Busy half the time: about half a core, far above a 50m request, yet gentle on a shared box.
BURN = ("import time\nwhile True:\n    end = time.monotonic() + 0.05\n"
        "    while time.monotonic() < end: pass\n    time.sleep(0.05)\n")
IDLE = "import time; time.sleep(600)"


def workload(name: str, program: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                    "name": "main", "image": "headway-demo/python:v1",
                    "args": ["-c", program],
                    "resources": {"requests": {"cpu": "50m", "memory": "16Mi"}}}]},
            },
        },
    }


def autoscaler(name: str, *, low: int, high: int) -> Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": low,
            "maxReplicas": high,
            "metrics": [{"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
        },
    }


async def test_busy_processes_scale_up_and_idle_ones_stay_at_min(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        for name, program in (("busy", BURN), ("idle", IDLE)):
            cluster.apply(workload(name, program), field_manager="test")
            cluster.apply(autoscaler(name, low=1, high=2), field_manager="test")

        def replicas(name: str) -> int:
            return int(cluster.get("apps/v1", "Deployment", name, "default")["spec"]["replicas"])

        def hpa(name: str) -> Obj:
            return cluster.get("autoscaling/v2", "HorizontalPodAutoscaler", name, "default")

        await eventually(lambda: replicas("busy") == 2, timeout=60, what="busy scaled to 2")
        metric = hpa("busy")["status"]["currentMetrics"][0]["resource"]["current"]
        assert metric["averageUtilization"] > 55  # measured from /proc, far above the target
        await eventually(lambda: hpa("idle")["status"].get("currentMetrics"), timeout=60,
                         what="idle measured")
        idle = hpa("idle")["status"]
        assert idle["currentMetrics"][0]["resource"]["current"]["averageUtilization"] < 45
        assert replicas("idle") == 1
        assert assess(hpa("idle")).status is HealthStatus.HEALTHY
        assert assess(hpa("busy")).status is HealthStatus.HEALTHY
