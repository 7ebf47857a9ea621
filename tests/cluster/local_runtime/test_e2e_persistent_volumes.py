"""End to end: a PersistentVolumeClaim is bound to a directory whose files outlive container
restarts and Pod replacement, stays while a Pod uses it, and takes its data when deleted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import headway, running_runtime
from headway.cluster.errors import NotFound
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Counts its own runs in the claim; exits until it has counted three, so restarts happen.
COUNTER = """\
import os, sys, time
path = '/data/count'
count = int(open(path).read()) + 1 if os.path.exists(path) else 1
open(path, 'w').write(str(count))
open('/logs/last-pod', 'w').write(os.environ['HOSTNAME'])
print(f'count={count}', flush=True)
if count < 3:
    sys.exit(1)
time.sleep(600)
"""

CLAIM: Obj = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}},
}


def counter_pod(name: str) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "containers": [{
                "name": "app", "image": "none", "command": [sys.executable, "-c", COUNTER],
                "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                 {"name": "data", "mountPath": "/logs", "subPath": "logs"}],
            }],
        },
    }


def table_row(kind: str, state: Path) -> list[str]:
    """The one row `headway get KIND` prints, split into cells."""
    listed = headway("get", kind, state=state)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.splitlines()[1].split()


def last_line(log: Path) -> str:
    lines = log.read_text().splitlines() if log.exists() else []
    return lines[-1] if lines else ""


async def test_a_claims_data_outlives_restarts_and_pods_until_the_claim_is_deleted(
    tmp_path: Path,
) -> None:
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        cluster.apply(CLAIM, field_manager="test")
        cluster.apply(counter_pod("first"), field_manager="test")
        first_log = tmp_path / "logs" / "default" / "first" / "app.log"
        await eventually(lambda: last_line(first_log) == "count=3", what="three runs counted")

        claim = cluster.get("v1", "PersistentVolumeClaim", "data", "default")
        assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                   "capacity": {"storage": "2Gi"}}
        volume = cluster.get("v1", "PersistentVolume", claim["spec"]["volumeName"])
        directory = Path(volume["spec"]["hostPath"]["path"])
        assert directory.parent == tmp_path / "volumes"
        assert (directory / "count").read_text() == "3"
        assert (directory / "logs" / "last-pod").read_text() == "first"
        name = volume["metadata"]["name"]
        assert table_row("pvc", tmp_path)[:4] == ["data", "Bound", name, "2Gi"]
        assert table_row("pv", tmp_path)[:5] == [name, "2Gi", "Delete", "Bound", "default/data"]

        cluster.delete("v1", "Pod", "first", "default")
        cluster.apply(counter_pod("second"), field_manager="test")
        second_log = tmp_path / "logs" / "default" / "second" / "app.log"
        await eventually(lambda: last_line(second_log) == "count=4", what="the next pod's count")
        assert (directory / "logs" / "last-pod").read_text() == "second"

        cluster.delete("v1", "PersistentVolumeClaim", "data", "default")
        protected = cluster.get("v1", "PersistentVolumeClaim", "data", "default")
        assert protected["metadata"]["deletionTimestamp"]  # kept: "second" still uses it
        assert (directory / "count").exists()

        cluster.delete("v1", "Pod", "second", "default")

        def claim_and_volume_gone() -> bool:
            for api_name, namespace in (("PersistentVolumeClaim", "default"),
                                        ("PersistentVolume", None)):
                name = "data" if namespace else volume["metadata"]["name"]
                try:
                    cluster.get("v1", api_name, name, namespace)
                    return False
                except NotFound:
                    continue
            return not directory.exists()

        await eventually(claim_and_volume_gone, what="claim, volume and data removed")


async def test_a_retained_volume_keeps_its_data_after_the_claim_goes(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        cluster = runtime.cluster
        cluster.apply(CLAIM, field_manager="test")

        def bound_volume() -> str:
            claim = cluster.get("v1", "PersistentVolumeClaim", "data", "default")
            phase = (claim.get("status") or {}).get("phase")
            return str(claim["spec"].get("volumeName") or "") if phase == "Bound" else ""

        name = await eventually(bound_volume, what="the claim bound")
        cluster.apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                       "spec": {"persistentVolumeReclaimPolicy": "Retain"}},
                      field_manager="admin", force=True)
        directory = Path(cluster.get("v1", "PersistentVolume", name)["spec"]["hostPath"]["path"])
        (directory / "keep").write_text("me")
        cluster.delete("v1", "PersistentVolumeClaim", "data", "default")

        def released() -> bool:
            status = cluster.get("v1", "PersistentVolume", name).get("status") or {}
            return status.get("phase") == "Released"

        await eventually(released, what="the volume Released")
        assert (directory / "keep").read_text() == "me"
