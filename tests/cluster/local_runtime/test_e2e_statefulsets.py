"""End to end: a StatefulSet starts `<name>-N` in order, each with its own claim that
outlives the Pod, rolls a partitioned update from the highest ordinal down, and scales
down from the top; a DaemonSet keeps one Pod and replaces it on a template change."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import running_runtime
from headway.health.registry import assess
from headway.health.status import HealthStatus
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Counts its runs in its claim, notes start and readiness, then serves HTTP on $PORT.
MEMBER = """\
import http.server, os, time
runs_file = '/data/runs'
runs = int(open(runs_file).read()) + 1 if os.path.exists(runs_file) else 1
open(runs_file, 'w').write(str(runs))
name, version = os.environ['HOSTNAME'], os.environ['VERSION']
def note(line):
    with open(os.environ['ORDER'], 'a') as f:
        f.write(line + '\\n')
note(f'start {name} {version} runs={runs}')
time.sleep(0.5)
note(f'ready {name}')
http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])),
                       http.server.SimpleHTTPRequestHandler).serve_forever()
"""


def stateful_set(order: Path, *, version: str = "v1", replicas: int = 3,
                 partition: int | None = None) -> Obj:
    container = {
        "name": "member", "image": "none", "command": [sys.executable, "-c", MEMBER],
        "env": [{"name": "ORDER", "value": str(order)}, {"name": "VERSION", "value": version}],
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    spec: Obj = {
        "replicas": replicas, "serviceName": "ledger",
        "selector": {"matchLabels": {"app": "ledger"}},
        "template": {"metadata": {"labels": {"app": "ledger"}},
                     "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
    }
    if partition is not None:
        spec["updateStrategy"] = {"type": "RollingUpdate",
                                  "rollingUpdate": {"partition": partition}}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "ledger", "namespace": "default"}, "spec": spec}


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_a_stateful_set_starts_in_order_keeps_claims_and_rolls_from_the_top(
    tmp_path: Path,
) -> None:
    order = tmp_path / "order.txt"
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster

        def live() -> Obj:
            return cluster.get("apps/v1", "StatefulSet", "ledger", "default")

        def healthy() -> str:
            result = assess(live())
            return result.message if result and result.status is HealthStatus.HEALTHY else ""

        cluster.apply(stateful_set(order), field_manager="test")
        await eventually(healthy, what="the StatefulSet Healthy")
        assert lines(order) == [
            "start ledger-0 v1 runs=1", "ready ledger-0",
            "start ledger-1 v1 runs=1", "ready ledger-1",
            "start ledger-2 v1 runs=1", "ready ledger-2",
        ]
        claims = cluster.list("v1", "PersistentVolumeClaim", namespace="default")
        assert sorted(c["metadata"]["name"] for c in claims) == [
            "data-ledger-0", "data-ledger-1", "data-ledger-2"]
        assert {c["status"]["phase"] for c in claims} == {"Bound"}
        pod = cluster.get("v1", "Pod", "ledger-1", "default")
        assert pod["spec"]["hostname"] == "ledger-1"
        assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"

        order.write_text("")
        cluster.apply(stateful_set(order, version="v2", partition=1), field_manager="test")
        await eventually(lambda: live()["status"].get("updatedReplicas") == 2 and healthy(),
                         what="the partitioned roll out complete")
        assert healthy() == "partitioned roll out complete: 2 new pods have been updated..."
        starts = [line for line in lines(order) if line.startswith("start")]
        assert starts == ["start ledger-2 v2 runs=2", "start ledger-1 v2 runs=2"]
        status = live()["status"]
        assert status["currentRevision"] != status["updateRevision"]
        assert status["currentReplicas"] == 1  # ledger-0, below the partition

        cluster.apply(stateful_set(order, version="v2", replicas=1, partition=1),
                      field_manager="test")
        await eventually(lambda: [p["metadata"]["name"] for p in
                                  cluster.list("v1", "Pod", namespace="default")] == ["ledger-0"],
                         what="scaled down to ledger-0")
        kept = cluster.list("v1", "PersistentVolumeClaim", namespace="default")
        assert len(kept) == 3  # claims outlive scale-down (Retain)


async def test_a_daemon_set_runs_one_pod_and_replaces_it_on_a_template_change(
    tmp_path: Path,
) -> None:
    order = tmp_path / "order.txt"
    template = copy.deepcopy(stateful_set(order)["spec"]["template"])
    template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    template["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    ds: Obj = {"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": {"name": "agent", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "ledger"}}, "template": template}}
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster

        def healthy() -> bool:
            result = assess(cluster.get("apps/v1", "DaemonSet", "agent", "default"))
            return bool(result and result.status is HealthStatus.HEALTHY)

        def pod_names() -> list[str]:
            return [p["metadata"]["name"] for p in cluster.list("v1", "Pod", namespace="default")]

        cluster.apply(ds, field_manager="test")
        await eventually(healthy, what="the DaemonSet Healthy")
        first = pod_names()
        assert len(first) == 1

        env = template["spec"]["containers"][0]["env"]
        env[1]["value"] = "v2"
        cluster.apply(ds, field_manager="test")
        await eventually(lambda: healthy() and pod_names() != first and len(pod_names()) == 1,
                         what="one new Pod, Healthy")
        assert [line.split()[2] for line in lines(order) if line.startswith("start")] == [
            "v1", "v2"]
        status = cluster.get("apps/v1", "DaemonSet", "agent", "default")["status"]
        assert status["updatedNumberScheduled"] == status["numberAvailable"] == 1


async def test_claims_go_with_a_scale_down_and_the_set_when_the_policy_says_delete(
    tmp_path: Path,
) -> None:
    order = tmp_path / "order.txt"
    sts = stateful_set(order, replicas=2)
    sts["spec"]["podManagementPolicy"] = "Parallel"
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": "Delete",
                                                           "whenDeleted": "Delete"}
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster

        def claims() -> list[str]:
            found = cluster.list("v1", "PersistentVolumeClaim", namespace="default")
            return sorted(c["metadata"]["name"] for c in found)

        def volume_dirs() -> int:
            root = tmp_path / "volumes"
            return len(list(root.iterdir())) if root.exists() else 0

        cluster.apply(sts, field_manager="test")
        await eventually(lambda: lines(order).count("ready ledger-0") == 1 and
                         lines(order).count("ready ledger-1") == 1, what="both ready")
        assert claims() == ["data-ledger-0", "data-ledger-1"]
        assert volume_dirs() == 2

        sts["spec"]["replicas"] = 1
        cluster.apply(sts, field_manager="test")
        await eventually(lambda: claims() == ["data-ledger-0"] and volume_dirs() == 1,
                         what="ledger-1's claim and data deleted with the scale-down")

        cluster.delete("apps/v1", "StatefulSet", "ledger", "default")
        await eventually(lambda: claims() == [] and volume_dirs() == 0,
                         what="the last claim and its data deleted with the set")
