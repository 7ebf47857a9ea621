"""End to end: a real process reads its mounted ConfigMap, Secret and downward API files
through the paths its manifest names, and sees a ConfigMap update (but not in a subPath)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import running_runtime
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

READER = """\
import os, time
while True:
    greeting = open('/etc/config/greeting').read()
    pinned = open('/etc/app.conf').read()
    token = open(os.environ['CREDS'] + '/token').read()
    name = open('/etc/podinfo/name').read()
    mode = oct(os.stat(os.environ['CREDS'] + '/token').st_mode & 0o777)
    os.makedirs('/scratch/out', exist_ok=True)
    print(f'greeting={greeting} pinned={pinned} token={token} name={name} mode={mode}',
          flush=True)
    time.sleep(0.2)
"""


def objects() -> list[Obj]:
    config: Obj = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "settings", "namespace": "default"},
              "data": {"greeting": "hello", "app.conf": "v1"}}
    secret: Obj = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "creds", "namespace": "default"},
              "data": {"token": base64.b64encode(b"s3cret").decode()}}
    pod: Obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "reader", "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "volumes": [
                {"name": "config", "configMap": {"name": "settings"}},
                {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o440}},
                {"name": "podinfo", "downwardAPI": {"items": [
                    {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                {"name": "scratch", "emptyDir": {}},
            ],
            "containers": [{
                "name": "app", "image": "none", "command": [sys.executable, "-c", READER],
                "env": [{"name": "CREDS", "value": "/etc/creds"}],
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/config"},
                    {"name": "config", "mountPath": "/etc/app.conf", "subPath": "app.conf"},
                    {"name": "creds", "mountPath": "/etc/creds", "readOnly": True},
                    {"name": "podinfo", "mountPath": "/etc/podinfo"},
                    {"name": "scratch", "mountPath": "/scratch"},
                ],
            }],
        },
    }
    return [config, secret, pod]


def last_line(log: Path) -> str:
    lines = log.read_text().splitlines() if log.exists() else []
    return lines[-1] if lines else ""


async def test_a_process_reads_its_volumes_and_sees_a_config_map_update(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        for obj in objects():
            runtime.cluster.apply(obj, field_manager="test")
        log = tmp_path / "logs" / "default" / "reader" / "app.log"
        first = "greeting=hello pinned=v1 token=s3cret name=reader mode=0o440"
        await eventually(lambda: last_line(log) == first, what=f"{first!r} in {log}")
        sandbox = next((tmp_path / "pods" / "default").glob("reader-*"))
        assert (sandbox / "volumes" / "scratch" / "out").is_dir()
        runtime.cluster.apply(
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "settings", "namespace": "default"},
             "data": {"greeting": "bonjour", "app.conf": "v2"}},
            field_manager="test",
        )
        updated = "greeting=bonjour pinned=v1 token=s3cret name=reader mode=0o440"
        await eventually(lambda: last_line(log) == updated, what="the updated ConfigMap")
        runtime.cluster.delete("v1", "Pod", "reader", "default")
        await eventually(lambda: not sandbox.exists(), what="the sandbox removed")


async def test_a_volume_type_the_runtime_cannot_make_is_a_config_error(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "claim", "namespace": "default"},
        "spec": {
            "volumes": [{"name": "data", "hostPath": {"path": "/var/data"}}],
            "containers": [{"name": "app", "image": "none",
                            "command": [sys.executable, "-c", "print('ran')"],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        },
    }
    async with running_runtime(tmp_path) as runtime:
        runtime.cluster.apply(pod, field_manager="test")

        def waiting() -> dict[str, str]:
            status = runtime.cluster.get("v1", "Pod", "claim", "default").get("status") or {}
            state = ((status.get("containerStatuses") or [{}])[0]).get("state") or {}
            return dict(state.get("waiting") or {})

        reason = await eventually(lambda: waiting().get("reason"), what="a waiting reason")
        assert reason == "CreateContainerConfigError"
        assert "hostPath is not supported" in waiting()["message"]
        assert not (tmp_path / "logs" / "default" / "claim" / "app.log").exists()
