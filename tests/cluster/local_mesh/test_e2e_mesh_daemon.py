"""The example repository's Istio manifests, unchanged, on `headway runtime up` with HAProxy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from cluster.local_runtime.harness import REPO, deployment, write_config
from cluster.local_runtime.test_e2e_daemon import headway
from conftest import require_program
from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.kubelet.processes import find_marked_processes
from headway.local_mesh.planes import haproxy_dir
from polling import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.haproxy]
CHECKOUT = REPO / "examples" / "gitops-repo" / "apps" / "checkout"


def manifests(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((CHECKOUT / name).read_text()) if d]


def mesh_address(cluster: LocalCluster) -> str | None:
    vs = cluster.get("networking.istio.io/v1beta1", "VirtualService", "checkout", "checkout")
    ready = [c for c in (vs.get("status") or {}).get("conditions") or [] if c["status"] == "True"]
    endpoints = [e for d in (vs.get("status") or {}).get("destinations") or []
                 for e in d["endpoints"]]
    return str(vs["metadata"]["annotations"]["headway.dev/address"]) if ready and endpoints \
        else None


def test_example_virtual_service_through_the_daemon_with_haproxy(tmp_path: Path) -> None:
    require_program("haproxy")
    config = write_config(tmp_path)
    config.write_text(config.read_text() + "router: haproxy\n")
    started = headway("runtime", "up", state=tmp_path)
    assert started.returncode == 0, started.stderr
    info = json.loads((tmp_path / "runtime.json").read_text())
    try:
        with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "checkout"}}
            cluster.apply(namespace, field_manager="test")
            for obj in [*manifests("services.yaml"), *manifests("virtualservice.yaml")]:
                cluster.apply(obj, field_manager="argocd-controller")
            app = deployment("checkout", "headway-demo/app:v1", replicas=1)
            app["metadata"]["namespace"] = "checkout"
            cluster.apply(app, field_manager="test")
            address = wait_for(lambda: mesh_address(cluster))
        answer = httpx2.get(f"http://{address}/", timeout=5)
        assert answer.status_code == 200 and answer.text.startswith("v1 checkout-")
        status = headway("runtime", "status", state=tmp_path)
        assert f"metrics: http://{info['metricsAddress']}/metrics" in status.stdout
        assert f"virtualservice checkout/checkout: {address}" in status.stdout
        text = httpx2.get(f"http://{info['metricsAddress']}/metrics", timeout=5).text
        assert ('headway_requests_total{namespace="checkout",virtualservice="checkout",'
                'service="checkout-stable"') in text
        pid_file = haproxy_dir(tmp_path / "mesh" / "checkout" / "checkout") / "haproxy.pid"
        haproxy_pid = int(pid_file.read_text())
        assert Path(f"/proc/{haproxy_pid}").exists()
    finally:
        stopped = headway("runtime", "down", state=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert find_marked_processes(info["runtimeId"]) == []
    assert not Path(f"/proc/{haproxy_pid}").exists()
