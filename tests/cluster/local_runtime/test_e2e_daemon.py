"""End to end: `headway runtime up/down/status` as a user runs them, and no orphans ever."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import TypeVar

import httpx2
import pytest

from cluster.local_runtime.harness import deployment, headway, service, write_config
from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.kubelet.processes import (
    find_marked_processes,
    pids_in_group,
    process_alive,
)
from polling import wait_for

pytestmark = pytest.mark.slow
T = TypeVar("T")


def pod_pids(cluster: LocalCluster) -> list[int]:
    pids = []
    for pod in cluster.list("v1", "Pod"):
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            if status.get("containerID", "").startswith("process://") and status.get("ready"):
                pids.append(int(status["containerID"].split("//")[1]))
    return pids


def service_address(cluster: LocalCluster) -> str | None:
    ingress = (
        (cluster.get("v1", "Service", "web", "default").get("status") or {}).get("loadBalancer")
        or {}
    ).get("ingress")
    return f"127.0.0.1:{ingress[0]['ports'][0]['port']}" if ingress else None


def test_up_status_down_leaves_no_process(tmp_path: Path) -> None:
    write_config(tmp_path)
    started = headway("runtime", "up", state=tmp_path)
    assert started.returncode == 0, started.stderr
    runtime_id = json.loads((tmp_path / "runtime.json").read_text())["runtimeId"]
    daemon = int((tmp_path / "runtime.pid").read_text())
    try:
        with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
            cluster.apply(
                deployment("web", "headway-demo/app:v1", replicas=2), field_manager="test"
            )
            cluster.apply(service("web"), field_manager="test")
            pids = wait_for(lambda: len(p := pod_pids(cluster)) == 2 and p)
            address = wait_for(lambda: service_address(cluster))
        assert httpx2.get(f"http://{address}/", timeout=5).text.startswith("v1 web-")
        status = headway("runtime", "status", state=tmp_path)
        assert f"running (pid {daemon})" in status.stdout
        assert "Pods:        2 Running" in status.stdout and address in status.stdout
        table = headway("get", "pods", state=tmp_path).stdout
        assert table.count("Running") == 2
        _check_object_commands(tmp_path)
    finally:
        stopped = headway("runtime", "down", state=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert "runtime stopped" in stopped.stdout
    assert not process_alive(daemon)
    assert all(not pids_in_group(pid) for pid in pids)  # each pod's whole process group
    assert find_marked_processes(runtime_id) == []
    assert not (tmp_path / "runtime.pid").exists()


def test_a_killed_daemon_takes_its_pods_along_and_a_restart_restores_them(tmp_path: Path) -> None:
    write_config(tmp_path)
    assert headway("runtime", "up", state=tmp_path).returncode == 0
    first_id = json.loads((tmp_path / "runtime.json").read_text())["runtimeId"]
    try:
        with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
            cluster.apply(
                deployment("web", "headway-demo/app:v1", replicas=1), field_manager="test"
            )
            cluster.apply(service("web"), field_manager="test")
            wait_for(lambda: pod_pids(cluster))
            address = wait_for(lambda: service_address(cluster))
        os.kill(int((tmp_path / "runtime.pid").read_text()), signal.SIGKILL)
        wait_for(lambda: not find_marked_processes(first_id))  # PR_SET_PDEATHSIG
        assert headway("runtime", "up", state=tmp_path).returncode == 0
        with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
            wait_for(lambda: _connects(address))
            pod = cluster.list("v1", "Pod")[0]
            assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
    finally:
        assert headway("runtime", "down", state=tmp_path).returncode == 0


def _connects(address: str) -> bool:
    try:
        return httpx2.get(f"http://{address}/", timeout=2).status_code == 200
    except httpx2.HTTPError:
        return False


def _check_object_commands(state: Path) -> None:
    """get -o json/wide, describe with conditions and Events, logs, and a clear error."""
    listed = json.loads(headway("get", "po", "-o", "json", state=state).stdout)
    pod = listed["items"][0]["metadata"]["name"]
    endpoints = headway("get", "ep", "web", state=state).stdout
    assert endpoints.count("127.0.0.1:") == 2  # both ready pods
    wide = headway("get", "pods", "-o", "wide", state=state).stdout
    assert "127.0.0.1:" in wide and "web-" in wide
    described = headway("describe", "deploy", "web", state=state).stdout
    assert "NewReplicaSetAvailable" in described and "ScalingReplicaSet" in described
    assert "serving version v1" in headway("logs", pod, state=state).stdout
    unknown = headway("get", "widgets", state=state)
    assert unknown.returncode == 1
    assert 'doesn\'t have a resource type "widgets"' in unknown.stderr
    missing = headway("logs", pod, "--previous", state=state)
    assert missing.returncode == 1 and "no previous log" in missing.stderr


def test_up_with_a_broken_config_says_where(tmp_path: Path) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text("images:\n  app:\n    comand: [x]\n")
    result = headway("runtime", "up", state=tmp_path)
    assert result.returncode == 2  # a usage problem, as with --foreground
    assert f"{config}:3: images.app.comand: unknown field (did you mean command?)" in result.stderr
    assert not (tmp_path / "runtime.pid").exists()
